"""GAT-style layer using an early PyG-like scatter softmax that exponentiates the raw attention
logits without subtracting the per-node max. With large logits exp() overflows to inf, inf/inf
gives NaN attention, and the attention vector's gradient is NaN.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.conv1.att"
EXPECT = "grad_nonfinite"


def scatter_softmax(src, index, num_nodes):
    out = src.exp()  # <-- CUT
    denom = torch.zeros(num_nodes).index_add_(0, index, out)
    return out / denom[index]


class GATConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.att = nn.Parameter(torch.randn(2 * d_out) * 3.0)

    def forward(self, x, edge_index):
        row, col = edge_index
        h = self.lin(x)
        logits = F.leaky_relu(torch.cat([h[row], h[col]], 1) @ self.att, 0.2)
        alpha = scatter_softmax(logits, col, x.size(0))
        return torch.zeros_like(h).index_add_(0, col, alpha.unsqueeze(1) * h[row])


class GAT(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = GATConv(8, 16), GATConv(16, 3)

    def forward(self, x, edge_index):
        return self.conv2(F.elu(self.conv1(x, edge_index)), edge_index)


def run():
    torch.manual_seed(0)
    model = GAT()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    x = torch.randn(12, 8) * 8.0
    edge_index = torch.cat([torch.randint(0, 12, (2, 40)), torch.arange(12).repeat(2, 1)], 1)
    y = torch.randint(0, 3, (12,))
    loss = F.cross_entropy(model(x, edge_index), y)
    opt.zero_grad()
    loss.backward()
    return {"model": model, "loss": loss}
