"""Reproduces mlfoundations/open_clip#573: fine-tuning with --grad-checkpointing and a
partially locked image tower printed "None of the inputs have requires_grad=True. Gradients
will be None"; switching to use_reentrant=False improved the results. The input of the
checkpointed resblocks comes from the frozen stem, so the unlocked blocks get .grad None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.visual.resblocks[3].mlp[0].weight"
EXPECT = "grad_none"


class ResidualAttentionBlock(nn.Module):
    def __init__(self, d, heads=2):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class VisionTransformer(nn.Module):
    def __init__(self, d=16, layers=4, patch=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, d, patch, stride=patch, bias=False)
        self.ln_pre = nn.LayerNorm(d)
        self.resblocks = nn.ModuleList([ResidualAttentionBlock(d) for _ in range(layers)])
        self.ln_post = nn.LayerNorm(d)
        self.proj = nn.Parameter(torch.randn(d, 8) * d ** -0.5)
        self.grad_checkpointing = False

    def lock(self, unlocked_groups=2):
        frozen = [self.conv1, self.ln_pre] + list(self.resblocks[:len(self.resblocks) - unlocked_groups])
        for m in frozen:
            for p in m.parameters():
                p.requires_grad = False

    def forward(self, x):
        x = self.conv1(x).flatten(2).transpose(1, 2)
        x = self.ln_pre(x)
        for r in self.resblocks:
            if self.grad_checkpointing:
                x = checkpoint(r, x, use_reentrant=True)  # <-- CUT
            else:
                x = r(x)
        return self.ln_post(x.mean(dim=1)) @ self.proj


class TextEncoder(nn.Module):
    def __init__(self, vocab=30, d=8):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, 8)

    def forward(self, text):
        return self.proj(self.token_embedding(text).mean(dim=1))


class CLIP(nn.Module):
    def __init__(self):
        super().__init__()
        self.visual = VisionTransformer()
        self.text = TextEncoder()
        self.logit_scale = nn.Parameter(torch.tensor(2.659))

    def forward(self, image, text):
        img = F.normalize(self.visual(image), dim=-1)
        txt = F.normalize(self.text(text), dim=-1)
        return img, txt, self.logit_scale.exp()


def clip_loss(img, txt, scale):
    logits = scale * img @ txt.t()
    labels = torch.arange(img.shape[0])
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


def run():
    torch.manual_seed(0)
    model = CLIP()
    model.visual.lock(unlocked_groups=2)
    model.visual.grad_checkpointing = True
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4)
    images = torch.randn(4, 3, 8, 8)
    text = torch.randint(0, 30, (4, 5))
    loss = clip_loss(*model(images, text))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
