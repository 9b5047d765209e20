"""pytorch_geometric_temporal#297 / #305: the EvolveGCN-O example fails in
loss.backward() with "Trying to backward through the graph a second time". The layer
evolves its GCN weight with a GRU step per snapshot and stores the result on the
module; the stored weight is carried into the next epoch, whose backward walks into
the graph already freed by the first epoch's backward.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class EvolveGCNO(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.initial_weight = nn.Parameter(torch.randn(1, in_channels, in_channels) * 0.3)
        self.recurrent_layer = nn.GRU(in_channels, in_channels, num_layers=1)
        self.weight = None

    def reinitialize_weight(self):
        self.weight = None

    def forward(self, x, adj):
        W = self.initial_weight if self.weight is None else self.weight
        _, W = self.recurrent_layer(W, W)
        self.weight = W  # <-- CUT
        return adj @ (x @ W.squeeze(0))


class RecurrentGCN(nn.Module):
    def __init__(self, node_features):
        super().__init__()
        self.recurrent = EvolveGCNO(node_features)
        self.linear = nn.Linear(node_features, 1)

    def forward(self, x, adj):
        return self.linear(F.relu(self.recurrent(x, adj)))


def make_snapshots(n=4, nodes=6, feats=4):
    snaps = []
    for _ in range(n):
        a = (torch.rand(nodes, nodes) > 0.6).float() + torch.eye(nodes)
        snaps.append((torch.randn(nodes, feats), a / a.sum(1, keepdim=True), torch.randn(nodes, 1)))
    return snaps


def run():
    torch.manual_seed(0)
    train_dataset = make_snapshots()
    model = RecurrentGCN(node_features=4)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.train()
    for epoch in range(2):
        loss = 0
        for i, (x, adj, y) in enumerate(train_dataset):
            y_pred = model(x, adj)
            loss = loss + torch.mean((y_pred - y) ** 2)
        loss = loss / (i + 1)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return {"model": model, "loss": loss}
