"""Hand-written NT-Xent loss: the self-similarities are removed by zeroing the
diagonal view of exp(sim / tau) in place. exp saved its output for backward,
so backward raises "modified by an inplace operation" (through the view).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SimCLR(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 32), nn.ReLU())
        self.projector = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 8))

    def forward(self, x):
        return F.normalize(self.projector(self.encoder(x)), dim=1)


def nt_xent(z1, z2, tau=0.5):
    z = torch.cat([z1, z2], 0)
    n = z1.shape[0]
    exp_sim = torch.exp(z @ z.t() / tau)
    exp_sim.diagonal().zero_()  # <-- CUT
    pos = torch.cat([exp_sim.diagonal(n), exp_sim.diagonal(-n)])
    return -torch.log(pos / exp_sim.sum(1)).mean()


def run():
    torch.manual_seed(0)
    model = SimCLR()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 20)
    v1 = x + 0.1 * torch.randn_like(x)
    v2 = x + 0.1 * torch.randn_like(x)
    loss = nt_xent(model(v1), model(v2))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
