"""Segment-consistency loss: the user turns the softmax output w (B x A x C) into class
numbers with (w == w.max(dim=2)[0].unsqueeze(-1)) and torch.max(wa, dim=2)[1], then
penalises predicted-class counts against a target histogram. The equality and index ops
have no gradient, so the consistency head gets none; the supervised head still trains.
Thread: discuss.pytorch.org "How to Not Lose the Gradient on This Operation?" (jayz, Aug 2022)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.consistency_head.weight"
EXPECT = "grad_none"


class SegNet(nn.Module):
    def __init__(self, d=8, n_cls=3):
        super().__init__()
        self.trunk = nn.GRU(d, 16, batch_first=True)
        self.sup_head = nn.Linear(16, n_cls)
        self.consistency_head = nn.Linear(16, n_cls)

    def forward(self, x):
        h, _ = self.trunk(x)
        return self.sup_head(h), torch.softmax(self.consistency_head(h), dim=2)


def class_numbers(w):
    wa = 1 * (w == torch.max(w, dim=2)[0].unsqueeze(-1))  # <-- CUT
    return torch.max(wa, dim=2)[1]


def histogram_loss(wp, target_hist, n_cls):
    counts = torch.stack([(wp == c).float().mean() for c in range(n_cls)])
    return (counts - target_hist).abs().sum()


def run():
    torch.manual_seed(0)
    model = SegNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(2, 4, 8)
    y = torch.randint(0, 3, (2, 4))
    target_hist = torch.tensor([0.5, 0.3, 0.2])
    logits, w = model(x)
    wp = class_numbers(w)
    loss = F.cross_entropy(logits.transpose(1, 2), y) + 0.1 * histogram_loss(wp, target_hist, 3)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "w": w}
