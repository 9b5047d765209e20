"""Phase of a learned complex filterbank via atan2, trained with anomaly detection on.
The user nudges only denominators that are exactly 0, but near-silent frames give real
and imaginary parts around 1e-19; their squares underflow, Atan2Backward0 returns inf,
and the projection's weight gradient becomes NaN. Anomaly mode reports MmBackward0.
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class PhaseFrontEnd(nn.Module):
    def __init__(self, frame=6):
        super().__init__()
        self.proj = nn.Linear(frame, 2, bias=False)

    def find_phase(self, subbands):
        numerator = subbands[:, 1]
        denominator = subbands[:, 0]
        epsilon = 1e-7
        nudge = (denominator == 0) * epsilon
        denominator = denominator + nudge
        return torch.atan2(numerator, denominator)  # <-- CUT

    def forward(self, frames):
        return self.find_phase(self.proj(frames))


def run():
    torch.manual_seed(0)
    model = PhaseFrontEnd()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    frames = torch.randn(8, 6)
    frames[5:] = frames[5:] * 1e-19
    target_phase = torch.zeros(8)
    with torch.autograd.detect_anomaly():
        phase = model(frames)
        loss = (torch.cos(phase) - torch.cos(target_phase)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
