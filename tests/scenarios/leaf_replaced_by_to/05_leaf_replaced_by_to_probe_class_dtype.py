"""A tiny linear-probe class creates its weight with requires_grad=True and then, in
the same `__init__`, converts it to the configured dtype with `.to(dtype)`. The
attribute now holds a non-leaf copy; `probe.w.grad` stays None after backward.
"""
import torch
import torch.nn.functional as F

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "probe.w"
EXPECT = "grad_none"


class LinearProbe:
    def __init__(self, d, n_cls, dtype=torch.float64):
        self.w = torch.zeros(d, n_cls, requires_grad=True)
        self.b = torch.zeros(n_cls, dtype=dtype, requires_grad=True)
        self.w = self.w.to(dtype)  # <-- CUT

    def __call__(self, feats):
        return feats @ self.w + self.b


def run():
    torch.manual_seed(0)
    probe = LinearProbe(10, 4)
    feats = torch.randn(32, 10, dtype=torch.float64)
    y = torch.randint(0, 4, (32,))
    loss = F.cross_entropy(probe(feats), y)
    loss.backward()
    return {"probe": probe, "loss": loss}
