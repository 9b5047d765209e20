"""Deep GCN trained with activation checkpointing to fit large graphs. Every block,
including the first one that holds the input projection, is wrapped in
checkpoint(..., use_reentrant=True). The raw node features do not require grad, so no
checkpoint output does either: the readout head trains, every block gets None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].lin.weight"
EXPECT = "grad_none"


class GCNBlock(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)
        self.norm = nn.LayerNorm(d_out)

    def forward(self, x, a_hat):
        return F.relu(self.norm(a_hat @ self.lin(x)))


class DeepGCN(nn.Module):
    def __init__(self, d_in=8, d=16, depth=4, n_cls=3, use_checkpoint=True):
        super().__init__()
        dims = [d_in] + [d] * depth
        self.blocks = nn.ModuleList([GCNBlock(dims[i], dims[i + 1]) for i in range(depth)])
        self.head = nn.Linear(d, n_cls)
        self.use_checkpoint = use_checkpoint

    def forward(self, x, a_hat):
        for blk in self.blocks:
            if self.use_checkpoint and self.training:
                x = checkpoint(blk, x, a_hat, use_reentrant=True)  # <-- CUT
            else:
                x = blk(x, a_hat)
        return self.head(x)


def run():
    torch.manual_seed(0)
    n = 20
    a = (torch.rand(n, n) < 0.2).float()
    a = ((a + a.t() + torch.eye(n)) > 0).float()
    deg = a.sum(1).pow(-0.5)
    a_hat = deg[:, None] * a * deg[None, :]
    x = torch.randn(n, 8)
    y = torch.randint(0, 3, (n,))
    model = DeepGCN().train()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    loss = F.cross_entropy(model(x, a_hat), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
