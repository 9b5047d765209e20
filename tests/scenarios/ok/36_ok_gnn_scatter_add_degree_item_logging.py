"""Control: message passing written by hand with index_add_ into a fresh zeros
buffer and scatter_add for degrees. The mean degree is logged with .item()
and the degree normaliser is built from integer edge counts; none of this cuts
the path to the message MLP, which trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.msg.weight"
EXPECT = "grad_ok"


class MPNN(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.msg = nn.Linear(d, d)
        self.out = nn.Linear(d, 1)

    def forward(self, x, src, dst):
        n = x.shape[0]
        deg = torch.zeros(n).scatter_add(0, dst, torch.ones(dst.shape[0]))
        self.mean_deg = deg.mean().item()
        m = self.msg(x)[src]
        agg = torch.zeros(n, m.shape[1]).index_add_(0, dst, m)
        agg = agg / deg.clamp(min=1.0)[:, None]
        return self.out(F.relu(agg + x)).squeeze(-1)


def run():
    torch.manual_seed(0)
    n = 12
    src = torch.randint(0, n, (40,))
    dst = torch.randint(0, n, (40,))
    model = MPNN(6)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(n, 6)
    y = torch.randn(n)
    pred = model(x, src, dst)
    loss = F.mse_loss(pred, y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
