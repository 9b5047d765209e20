"""CoCa-style captioner: image tokens come from a vit_pytorch-like Extractor
wrapper that hooks the ViT and returns the cached embeddings. The wrapper
stores `output.clone().detach()`, so the contrastive + caption losses never
reach the image encoder: its patch embedding has .grad None after backward.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.img_encoder.vit.to_patch.weight"
EXPECT = "grad_none"


class TinyViT(nn.Module):
    def __init__(self, dim=32, patch=4, depth=2):
        super().__init__()
        self.patch = patch
        self.to_patch = nn.Linear(3 * patch * patch, dim)
        self.blocks = nn.ModuleList(
            [nn.TransformerEncoderLayer(dim, 4, dim * 2, dropout=0.0, batch_first=True) for _ in range(depth)]
        )
        self.norm = nn.LayerNorm(dim)

    def forward(self, img):
        b, c, h, w = img.shape
        p = self.patch
        x = img.unfold(2, p, p).unfold(3, p, p)            # b c h' w' p p
        x = x.permute(0, 2, 3, 1, 4, 5).reshape(b, -1, c * p * p)
        x = self.to_patch(x)
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)


class Extractor(nn.Module):
    """Keeps the embeddings produced by `vit.norm` (layer hook), like vit_pytorch."""

    def __init__(self, vit, layer_name="norm"):
        super().__init__()
        self.vit = vit
        self.latents = None
        getattr(vit, layer_name).register_forward_hook(self._hook)

    def _hook(self, module, inputs, output):
        self.latents = output.clone().detach()  # <-- CUT

    def forward(self, img):
        self.latents = None
        _ = self.vit(img)
        return self.latents


class CoCa(nn.Module):
    def __init__(self, vocab=50, dim=32):
        super().__init__()
        self.img_encoder = Extractor(TinyViT(dim=dim))
        self.tok = nn.Embedding(vocab, dim)
        self.xattn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.to_logits = nn.Linear(dim, vocab)
        self.img_to_latent = nn.Linear(dim, dim, bias=False)
        self.text_to_latent = nn.Linear(dim, dim, bias=False)
        self.temperature = nn.Parameter(torch.tensor(1.0))

    def forward(self, text, images):
        img_tokens = self.img_encoder(images)
        txt = self.tok(text)
        dec, _ = self.xattn(txt, img_tokens, img_tokens)
        logits = self.to_logits(dec)
        img_lat = F.normalize(self.img_to_latent(img_tokens.mean(1)), dim=-1)
        txt_lat = F.normalize(self.text_to_latent(txt.mean(1)), dim=-1)
        sim = img_lat @ txt_lat.t() * self.temperature.exp()
        return logits, sim


def run():
    torch.manual_seed(0)
    model = CoCa()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    images = torch.randn(4, 3, 16, 16)
    text = torch.randint(0, 50, (4, 7))

    logits, sim = model(text[:, :-1], images)
    caption_loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), text[:, 1:].reshape(-1))
    labels = torch.arange(4)
    contrastive_loss = (F.cross_entropy(sim, labels) + F.cross_entropy(sim.t(), labels)) / 2
    loss = caption_loss + 1.0 * contrastive_loss

    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
