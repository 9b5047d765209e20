"""Hand-written GraphSAGE-style layer stack that zeroes the embeddings of isolated nodes after
the activation with an in-place boolean-mask assignment (h[isolated] = 0). ReLU saved its output
for backward, so loss.backward() raises "modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SAGELayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.self_lin, self.nbr_lin = nn.Linear(d_in, d_out), nn.Linear(d_in, d_out, bias=False)

    def forward(self, h, A):
        deg = A.sum(1, keepdim=True).clamp(min=1)
        return self.self_lin(h) + self.nbr_lin(A @ h / deg)


class SAGE(nn.Module):
    def __init__(self, d_in=7, d=16, n_cls=3):
        super().__init__()
        self.layers = nn.ModuleList([SAGELayer(d_in, d), SAGELayer(d, d)])
        self.out = nn.Linear(d, n_cls)

    def forward(self, x, A):
        isolated = A.sum(1) == 0
        h = x
        for layer in self.layers:
            h = F.relu(layer(h, A))
            h[isolated] = 0.0  # <-- CUT
        return self.out(h)


def run():
    torch.manual_seed(0)
    n = 15
    A = (torch.rand(n, n) < 0.15).float()
    A = ((A + A.t()) > 0).float().fill_diagonal_(0)
    A[4, :] = 0
    A[:, 4] = 0
    x, y = torch.randn(n, 7), torch.randint(0, 3, (n,))
    model = SAGE()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    loss = F.cross_entropy(model(x, A), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
