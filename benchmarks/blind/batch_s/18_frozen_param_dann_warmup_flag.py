"""DANN warm-up: the domain classifier is frozen during the first epochs of
source-only training. The unfreeze checks cfg["warmup_epochs"] against a string
epoch label, so it never triggers; the domain classifier gets no gradient while
the feature extractor and label classifier train."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.domain_head[0].weight"
EXPECT = "grad_none"


class DANN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 20), nn.ReLU())
        self.label_head = nn.Linear(20, 4)
        self.domain_head = nn.Sequential(nn.Linear(20, 10), nn.ReLU(), nn.Linear(10, 1))


def set_domain_trainable(model, flag):
    for p in model.domain_head.parameters():
        p.requires_grad = flag  # <-- CUT


def run():
    torch.manual_seed(0)
    cfg = {"warmup_epochs": 1}
    model = DANN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    set_domain_trainable(model, False)
    xs, ys = torch.randn(8, 10), torch.randint(0, 4, (8,))
    xt = torch.randn(8, 10)
    for epoch in ["epoch_0", "epoch_1"]:
        if epoch == cfg["warmup_epochs"]:
            set_domain_trainable(model, True)
        fs, ft = model.features(xs), model.features(xt)
        cls = F.cross_entropy(model.label_head(fs), ys)
        d = model.domain_head(torch.cat([fs, ft])).squeeze(1)
        dom = F.binary_cross_entropy_with_logits(d, torch.cat([torch.zeros(8), torch.ones(8)]))
        loss = cls + 0.1 * dom
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
