"""Speaker encoder with an energy regulariser (h ** 2 per frame) and a cosine head. After
computing the energy, the user L2-normalises h in place (h /= h.norm(...)) to save memory.
As the forum answer explains, x ** 2 saves its input for backward, so the in-place division
makes backward raise "modified by an inplace operation".
Thread: discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SpeakerEncoder(nn.Module):
    def __init__(self, n_mels=10, d=16, n_spk=4):
        super().__init__()
        self.frame = nn.Sequential(nn.Linear(n_mels, d), nn.Tanh(), nn.Linear(d, d))
        self.spk = nn.Linear(d, n_spk, bias=False)

    def forward(self, mels):
        h = self.frame(mels).mean(1)
        energy = (h ** 2).sum(-1)
        h /= h.norm(dim=-1, keepdim=True)  # <-- CUT
        logits = h @ F.normalize(self.spk.weight, dim=-1).t() * 10.0
        return logits, energy


def run():
    torch.manual_seed(0)
    model = SpeakerEncoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    mels = torch.randn(3, 7, 10)
    spk = torch.tensor([0, 2, 3])
    logits, energy = model(mels)
    loss = F.cross_entropy(logits, spk) + 1e-3 * (energy - 1.0).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
