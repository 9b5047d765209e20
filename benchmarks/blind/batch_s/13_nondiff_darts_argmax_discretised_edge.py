"""DARTS search with "hard" sampling: to save compute, each MixedOp runs only the
op picked by alpha.argmax() and scales nothing by the architecture weights, so
the architecture parameters alpha get no gradient while the op weights train."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.alphas"
EXPECT = "grad_none"


class SearchNet(nn.Module):
    def __init__(self, c=8, n_edges=3):
        super().__init__()
        self.edges = nn.ModuleList(
            [nn.ModuleList([nn.Linear(c, c), nn.Sequential(nn.Linear(c, c), nn.ReLU()), nn.Identity()])
             for _ in range(n_edges)])
        self.alphas = nn.Parameter(1e-3 * torch.randn(n_edges, 3))
        self.head = nn.Linear(c, 2)

    def forward(self, x):
        for i, ops in enumerate(self.edges):
            k = int(self.alphas[i].argmax())  # <-- CUT
            x = ops[k](x)
        return self.head(x)


def run():
    torch.manual_seed(0)
    net = SearchNet()
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    x, y = torch.randn(10, 8), torch.randint(0, 2, (10,))
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "loss": loss}
