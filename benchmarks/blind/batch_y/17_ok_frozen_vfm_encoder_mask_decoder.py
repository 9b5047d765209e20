"""Control: semantic segmentation with a frozen DINOv2-like ViT encoder and a Mask2Former-style
decoder. The encoder is frozen on purpose (requires_grad_(False), eval mode) and its patch tokens are
only cross-attended by learnable queries; the per-query masks come from an einsum with the patch
features. The decoder's query embedding gets a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "decoder.query_embed.weight"
EXPECT = "grad_ok"

CFG = {"freeze_encoder": True, "num_queries": 4, "num_classes": 3, "dim": 16}


class ViTEncoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, 4, 4)
        self.blocks = nn.TransformerEncoderLayer(dim, 2, 32, dropout=0.0, batch_first=True)

    def forward(self, x):
        t = self.patch_embed(x)
        b, c, h, w = t.shape
        return self.blocks(t.flatten(2).transpose(1, 2)), (h, w)


class Mask2FormerLikeDecoder(nn.Module):
    def __init__(self, dim, nq, nc):
        super().__init__()
        self.query_embed = nn.Embedding(nq, dim)
        self.cross_attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.class_head = nn.Linear(dim, nc + 1)
        self.mask_embed = nn.Linear(dim, dim)

    def forward(self, tokens):
        q = self.query_embed.weight.unsqueeze(0).expand(tokens.shape[0], -1, -1)
        q = q + self.cross_attn(q, tokens, tokens)[0]
        return self.class_head(q), torch.einsum("bqc,bnc->bqn", self.mask_embed(q), tokens)


def run():
    torch.manual_seed(0)
    encoder = ViTEncoder(CFG["dim"])
    decoder = Mask2FormerLikeDecoder(CFG["dim"], CFG["num_queries"], CFG["num_classes"])
    if CFG["freeze_encoder"]:
        encoder.requires_grad_(False)
        encoder.eval()
    opt = torch.optim.AdamW([p for p in decoder.parameters() if p.requires_grad], lr=1e-4)
    img = torch.randn(2, 3, 16, 16)
    gt = torch.randint(0, CFG["num_classes"], (2, 4, 4))

    tokens, (h, w) = encoder(img)
    cls_logits, mask_logits = decoder(tokens)
    seg = torch.einsum("bqk,bqn->bkn", cls_logits.softmax(-1)[..., :-1], mask_logits.sigmoid())
    loss = F.cross_entropy(seg.view(2, CFG["num_classes"], h, w), gt)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"encoder": encoder, "decoder": decoder, "loss": loss}
