"""Learned frame interpolation: a small net predicts a blend position t in [0, 3] and the
user picks the two neighbouring frames with t.long() and blends them with the fractional
part computed from the same cast value. Type conversions to float are differentiable, but
the .long() result has no grad_fn, so the position head gets no gradient.
Thread: discuss.pytorch.org/t/is-the-type-conversion-differentiable/45436
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.pos_head.weight"
EXPECT = "grad_none"


class Interpolator(nn.Module):
    def __init__(self, n_frames=4, d=12):
        super().__init__()
        self.n_frames = n_frames
        self.ctx = nn.Linear(n_frames * d, 16)
        self.pos_head = nn.Linear(16, 1)
        self.refine = nn.Linear(d, d)

    def forward(self, frames):
        b = frames.shape[0]
        h = torch.tanh(self.ctx(frames.reshape(b, -1)))
        t = torch.sigmoid(self.pos_head(h)).squeeze(-1) * (self.n_frames - 1)
        lo = t.long().clamp(max=self.n_frames - 2)  # <-- CUT
        frac = (t.long().float() - lo.float()).unsqueeze(-1)
        idx = torch.arange(b)
        out = (1 - frac) * frames[idx, lo] + frac * frames[idx, lo + 1]
        return self.refine(out)


def run():
    torch.manual_seed(0)
    model = Interpolator()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    frames = torch.randn(3, 4, 12)
    target = torch.randn(3, 12)
    loss = F.mse_loss(model(frames), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
