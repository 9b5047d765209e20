"""DLRM-style bottom MLP: create_mlp initialises each bias from
N(0, sqrt(1/m)) with the wrong scale/offset, so a layer can start with a large
negative bias. Every ReLU input of that layer is negative, all derivatives are
zero, and the first layer's weight gradient is exactly zero (facebookresearch/dlrm#358).
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "dlrm.bot_l[0].weight"
EXPECT = "grad_zero"


class DLRM_Net(nn.Module):
    def create_mlp(self, ln, rng):
        layers = nn.ModuleList()
        for i in range(0, ln.size - 1):
            n, m = int(ln[i]), int(ln[i + 1])
            LL = nn.Linear(n, m, bias=True)
            std_dev = np.sqrt(2 / (m + n))
            W = rng.normal(0.0, std_dev, size=(m, n)).astype(np.float32)
            bt = (rng.normal(0.0, np.sqrt(1 / m), size=m) - 12.0 * np.sqrt(m)).astype(np.float32)
            LL.weight.data = torch.tensor(W, requires_grad=True)
            LL.bias.data = torch.tensor(bt, requires_grad=True)
            layers.append(LL)
            layers.append(nn.ReLU())
        return torch.nn.Sequential(*layers)

    def __init__(self, m_spa=4, ln_emb=(10, 12), ln_bot=(5, 8, 4), ln_top=(12, 6, 1), seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.emb_l = nn.ModuleList([nn.EmbeddingBag(n, m_spa, mode="sum") for n in ln_emb])
        self.bot_l = self.create_mlp(np.array(ln_bot), rng)
        self.top_l = nn.Sequential(nn.Linear(ln_top[0], ln_top[1]), nn.ReLU(), nn.Linear(ln_top[1], ln_top[2]))

    def forward(self, dense_x, lS_o, lS_i):
        x = self.bot_l(dense_x)  # <-- CUT
        ly = [emb(idx, off) for emb, idx, off in zip(self.emb_l, lS_i, lS_o)]
        z = torch.cat([x] + ly, dim=1)
        return torch.sigmoid(self.top_l(z))


def run():
    torch.manual_seed(0)
    dlrm = DLRM_Net()
    optimizer = torch.optim.SGD(dlrm.parameters(), lr=0.01)
    dense_x = torch.rand(4, 5)
    lS_o = [torch.tensor([0, 1, 2, 3]), torch.tensor([0, 2, 3, 4])]
    lS_i = [torch.tensor([1, 2, 3, 4]), torch.tensor([0, 5, 7, 9, 11])]
    T = torch.tensor([[1.0], [0.0], [1.0], [0.0]])
    Z = dlrm(dense_x, lS_o, lS_i)
    E = nn.functional.binary_cross_entropy(Z, T)
    optimizer.zero_grad()
    E.backward()
    optimizer.step()
    return {"dlrm": dlrm, "loss": E}
