"""SAM fine-tuning script with args.if_update_encoder = True: the image encoder's parameters are added
to the optimizer, but the training loop still computes the image embedding inside torch.no_grad()
(kept from the decoder-only script). The prompt encoder is frozen on purpose. The mask decoder trains;
sam.image_encoder.patch_embed.weight.grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "sam.image_encoder.patch_embed.weight"
EXPECT = "grad_none"


class Args:
    if_update_encoder = True
    lr = 1e-4
    out_size = 16


class ImageEncoderViT(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, 4, stride=4)
        self.block = nn.TransformerEncoderLayer(dim, 2, 32, batch_first=True, dropout=0.0)
        self.neck = nn.Conv2d(dim, dim, 1)

    def forward(self, x):
        x = self.patch_embed(x)
        b, c, h, w = x.shape
        t = self.block(x.flatten(2).transpose(1, 2))
        return self.neck(t.transpose(1, 2).reshape(b, c, h, w))


class PromptEncoder(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.no_mask_embed = nn.Embedding(1, dim)
        self.sparse = nn.Embedding(2, dim)

    def forward(self, points=None, boxes=None, masks=None, bs=1, hw=(4, 4)):
        sparse = self.sparse.weight.unsqueeze(0).expand(bs, -1, -1)
        dense = self.no_mask_embed.weight.view(1, -1, 1, 1).expand(bs, -1, *hw)
        return sparse, dense


class MaskDecoder(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.mask_token = nn.Parameter(torch.randn(1, 1, dim) * 0.1)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.upscale = nn.ConvTranspose2d(dim, dim, 4, stride=4)

    def forward(self, image_embedding, sparse, dense):
        src = image_embedding + dense
        b, c, h, w = src.shape
        tokens = torch.cat([self.mask_token.expand(b, -1, -1), sparse], 1)
        q, _ = self.attn(tokens, src.flatten(2).transpose(1, 2), src.flatten(2).transpose(1, 2))
        up = self.upscale(src)
        return torch.einsum("bc,bchw->bhw", q[:, 0], up).unsqueeze(1)


class Sam(nn.Module):
    def __init__(self):
        super().__init__()
        self.image_encoder = ImageEncoderViT()
        self.prompt_encoder = PromptEncoder()
        self.mask_decoder = MaskDecoder()


def run():
    torch.manual_seed(0)
    args = Args()
    sam = Sam()
    for p in sam.prompt_encoder.parameters():
        p.requires_grad = False
    params = list(sam.mask_decoder.parameters())
    if args.if_update_encoder:
        params += list(sam.image_encoder.parameters())
    optimizer = torch.optim.AdamW(params, lr=args.lr)
    imgs = torch.randn(2, 3, 16, 16)
    msks = (torch.rand(2, 1, 16, 16) > 0.5).float()

    for i in range(1):
        with torch.no_grad():
            img_emb = sam.image_encoder(imgs)  # <-- CUT
        sparse_emb, dense_emb = sam.prompt_encoder(points=None, boxes=None, masks=None, bs=2)
        pred = sam.mask_decoder(img_emb, sparse_emb, dense_emb)
        loss = F.binary_cross_entropy_with_logits(pred, msks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"sam": sam, "optimizer": optimizer, "loss": loss, "img_emb": img_emb}
