"""Frozen pretrained SSL encoder run under inference_mode on purpose, but the new trainable adapter
was called inside the same block; features are .clone()d as the error suggests and the adapter gets no grad.
Thread: fine-tuning adapter on frozen DINO backbone, adapter grad None (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "inference_mode"
QUERY = 'model.adapter.weight'
EXPECT = "grad_none"

class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(20, 32), nn.GELU(), nn.Linear(32, 32))
        self.backbone.requires_grad_(False)
        self.adapter = nn.Linear(32, 32)
        self.cls = nn.Linear(32, 5)
    def forward(self, x):
        with torch.inference_mode():
            f = self.backbone(x)
            f = f + self.adapter(f)  # <-- CUT
        return self.cls(f.clone())

def run():
    torch.manual_seed(0)
    model = Probe()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], 1e-3)
    x, y = torch.randn(8, 20), torch.randint(0, 5, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    return {"model": model}
