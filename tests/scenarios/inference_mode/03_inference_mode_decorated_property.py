"""CLIP-style zero-shot head: the text tower exposes `class_embeddings` as a
property decorated with @torch.inference_mode() (written for the eval script).
Fine-tuning reuses it; the user added .clone() after the "Inference tensors
cannot be saved for backward" error, so the step runs but the text projection
never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.text.proj.weight"
EXPECT = "grad_none"


class TextTower(nn.Module):
    def __init__(self, n_classes=4, d=16):
        super().__init__()
        self.prompts = nn.Parameter(torch.randn(n_classes, d))
        self.proj = nn.Linear(d, d)

    @property
    @torch.inference_mode()
    def class_embeddings(self):
        return F.normalize(self.proj(self.prompts), dim=-1)  # <-- CUT


class ZeroShot(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.image = nn.Sequential(nn.Linear(32, d), nn.GELU(), nn.Linear(d, d))
        self.text = TextTower(d=d)
        self.logit_scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, img):
        z = F.normalize(self.image(img), dim=-1)
        t = self.text.class_embeddings.clone()
        return self.logit_scale.exp() * z @ t.t()


def run():
    torch.manual_seed(0)
    model = ZeroShot()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    img = torch.randn(8, 32)
    y = torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(img), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
