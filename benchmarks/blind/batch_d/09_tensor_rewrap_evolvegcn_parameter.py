"""EvolveGCN-O: a GRU evolves the GCN weight matrix every snapshot, and the
forward writes the result back with `self.conv.weight = Parameter(W)`. Wrapping
the evolved weight in a new Parameter makes it a fresh leaf, so the GRU that
produced it never gets a gradient
(benedekrozemberczki/pytorch_geometric_temporal#80).
"""
import torch
import torch.nn as nn

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.recurrent.recurrent_layer.weight_ih_l0"
EXPECT = "grad_none"


class DenseGCNConv(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c_in, c_out) * 0.1)

    def forward(self, x, adj):
        deg = adj.sum(-1, keepdim=True).clamp(min=1)
        return (adj @ (x @ self.weight)) / deg


class EvolveGCNO(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.initial_weight = nn.Parameter(torch.randn(1, in_channels, in_channels) * 0.1)
        self.recurrent_layer = nn.GRU(input_size=in_channels, hidden_size=in_channels, num_layers=1)
        self.conv_layer = DenseGCNConv(in_channels, in_channels)
        self.weight = None

    def forward(self, x, adj):
        W = self.initial_weight if self.weight is None else self.weight
        _, W = self.recurrent_layer(W, W)
        self.weight = W
        self.conv_layer.weight = torch.nn.Parameter(W.squeeze(dim=0))  # <-- CUT
        return self.conv_layer(x, adj)


class RecurrentGCN(nn.Module):
    def __init__(self, node_features=4):
        super().__init__()
        self.recurrent = EvolveGCNO(node_features)
        self.linear = nn.Linear(node_features, 1)

    def forward(self, x, adj):
        return self.linear(torch.relu(self.recurrent(x, adj)))


def run():
    torch.manual_seed(0)
    model = RecurrentGCN()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x = torch.randn(5, 4)
    adj = (torch.rand(5, 5) > 0.5).float()
    y = torch.randn(5, 1)
    y_hat = model(x, adj)
    cost = torch.mean((y_hat - y) ** 2)
    optimizer.zero_grad()
    cost.backward()
    optimizer.step()
    return {"model": model, "cost": cost}
