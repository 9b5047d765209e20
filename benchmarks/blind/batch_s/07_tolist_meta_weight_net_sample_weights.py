"""Sample re-weighting with a small weight network (Meta-Weight-Net style): the
per-sample losses go through weight_net to get weights. The trainer turns the
weights into a list with .tolist() to clip them in Python and multiplies the
losses by the plain floats, so weight_net never receives a gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.weight_net[0].weight"
EXPECT = "grad_none"


class Trainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 2))
        self.weight_net = nn.Sequential(nn.Linear(1, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
        params = list(self.model.parameters()) + list(self.weight_net.parameters())
        self.opt = torch.optim.SGD(params, lr=0.1)

    def step(self, x, y):
        per = F.cross_entropy(self.model(x), y, reduction="none")
        w = self.weight_net(per.unsqueeze(1)).squeeze(1)
        w_list = w.tolist()  # <-- CUT
        w_list = [min(max(v, 0.05), 1.0) for v in w_list]
        loss = sum(wi * li for wi, li in zip(w_list, per)) / len(w_list)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    x, y = torch.randn(12, 5), torch.randint(0, 2, (12,))
    loss = trainer.step(x, y)
    return {"trainer": trainer, "loss": loss}
