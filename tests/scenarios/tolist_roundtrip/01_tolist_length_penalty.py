"""A length-penalty term for a duration predictor is computed in a Python loop
over pred.tolist() and rebuilt with torch.tensor. The main loss trains the
shared layer, but the duration head only feeds the rebuilt penalty: no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.dur.weight"
EXPECT = "grad_none"


class TTS(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Linear(6, 12)
        self.mel = nn.Linear(12, 6)
        self.dur = nn.Linear(12, 1)

    def forward(self, x):
        h = torch.relu(self.shared(x))
        return self.mel(h), F.softplus(self.dur(h)).squeeze(-1)


def length_penalty(pred_dur, target_len):
    durs = pred_dur.tolist()  # <-- CUT
    total = [sum(row) for row in durs]
    return torch.tensor([abs(t - g) for t, g in zip(total, target_len)]).mean()


def run():
    torch.manual_seed(0)
    model = TTS()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(2, 5, 6)
    mel_target = torch.randn(2, 5, 6)
    mel, dur = model(x)
    loss = F.l1_loss(mel, mel_target) + 0.1 * length_penalty(dur, [9.0, 7.0])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
