"""pytorch_geometric_temporal#57 (STConv): the spatial step loops over batch and time
and writes `T[b][t] = self._graph_conv(T[b][t], ...)` back into the same tensor.
Each graph conv saves its input slice for backward, the next slot write bumps T's
version, and loss.backward() raises "modified by an inplace operation".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TemporalConv(nn.Module):
    def __init__(self, c_in, c_out, k=3):
        super().__init__()
        self.conv_p = nn.Conv2d(c_in, c_out, (1, k))
        self.conv_q = nn.Conv2d(c_in, c_out, (1, k))

    def forward(self, x):  # x: (B, N, T, C)
        x = x.permute(0, 3, 1, 2)
        h = self.conv_p(x) * torch.sigmoid(self.conv_q(x))
        return h.permute(0, 2, 3, 1)


class GraphConv(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.lin = nn.Linear(c_in, c_out, bias=False)

    def forward(self, x, adj):  # x: (N, C)
        return adj @ self.lin(x)


class STConv(nn.Module):
    def __init__(self, c_in, c_hidden, c_out):
        super().__init__()
        self.temporal1 = TemporalConv(c_in, c_hidden)
        self._graph_conv = GraphConv(c_hidden, c_hidden)
        self.temporal2 = TemporalConv(c_hidden, c_out)
        self.norm = nn.BatchNorm2d(c_out)

    def forward(self, x, adj):
        T = self.temporal1(x)
        for b in range(T.size(0)):
            for t in range(T.size(2)):
                T[b, :, t] = self._graph_conv(T[b, :, t], adj)  # <-- CUT
        T = F.relu(T)
        T = self.temporal2(T)
        return self.norm(T.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)


class TrafficModel(nn.Module):
    def __init__(self, n_feat=2, horizon=3):
        super().__init__()
        self.st1 = STConv(n_feat, 8, 8)
        self.head = nn.Linear(8, horizon)

    def forward(self, x, adj):
        h = self.st1(x, adj)
        return self.head(h[:, :, -1])


def run():
    torch.manual_seed(0)
    n_nodes = 5
    a = (torch.rand(n_nodes, n_nodes) > 0.5).float() + torch.eye(n_nodes)
    adj = a / a.sum(1, keepdim=True)
    x = torch.randn(2, n_nodes, 8, 2)  # (batch, nodes, time, features)
    y = torch.randn(2, n_nodes, 3)
    model = TrafficModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = F.mse_loss(model(x, adj), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
