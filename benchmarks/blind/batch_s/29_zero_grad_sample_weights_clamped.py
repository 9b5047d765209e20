"""Sample re-weighting with learnable per-example weights (one per training
example), clamped to [0, 1] before weighting the loss. The weights were
initialised to 2.0 ("start by trusting every sample"), so the clamp is saturated
everywhere and the weights' gradient is exactly zero."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "reweighter.raw"
EXPECT = "grad_zero"


class SampleReweighter(nn.Module):
    def __init__(self, n_samples, init=2.0):
        super().__init__()
        self.raw = nn.Parameter(torch.full((n_samples,), init))

    def forward(self, idx, per_sample_loss):
        w = self.raw[idx].clamp(0.0, 1.0)  # <-- CUT
        return (w * per_sample_loss).sum() / w.sum().clamp_min(1e-6)


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    reweighter = SampleReweighter(100)
    opt = torch.optim.SGD(list(model.parameters()) + list(reweighter.parameters()), lr=0.1)
    idx = torch.arange(10, 20)
    x, y = torch.randn(10, 4), torch.randint(0, 2, (10,))
    per = F.cross_entropy(model(x), y, reduction="none")
    loss = reweighter(idx, per)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "reweighter": reweighter, "loss": loss}
