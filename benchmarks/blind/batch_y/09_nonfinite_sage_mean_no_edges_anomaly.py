"""GraphSAGE (mean aggregator) on a graph that has no edges, with anomaly detection on while
debugging. The mean is written as sum / in-degree, which is 0 / 0 = nan for every node; the nan
logits reach the cross-entropy and backward raises "Function ... returned nan values in its 0th
output" (DGL's SAGEConv printed nan on an edgeless graph).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SAGEConvMean(nn.Module):
    def __init__(self, in_feats, out_feats, activation=None):
        super().__init__()
        self.fc_self = nn.Linear(in_feats, out_feats)
        self.fc_neigh = nn.Linear(in_feats, out_feats)
        self.activation = activation

    def forward(self, edge_index, h):
        src, dst = edge_index
        n = h.shape[0]
        agg = torch.zeros_like(h).index_add(0, dst, h[src])
        deg = torch.zeros(n).index_add(0, dst, torch.ones(dst.shape[0]))
        h_neigh = agg / deg.unsqueeze(1)  # <-- CUT
        rst = self.fc_self(h) + self.fc_neigh(h_neigh)
        return self.activation(rst) if self.activation is not None else rst


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(2, 4)
        self.conv = SAGEConvMean(4, 16, activation=nn.LeakyReLU())
        self.out = nn.Linear(16, 2)

    def forward(self, edge_index, node_ids):
        return self.out(self.conv(edge_index, self.embedding(node_ids)))


def run():
    torch.manual_seed(0)
    edge_index = torch.zeros(2, 0, dtype=torch.long)   # adjacency [[0, 0], [0, 0]]
    node_ids = torch.tensor([0, 1])
    labels = torch.tensor([0, 1])
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with torch.autograd.detect_anomaly():
        logits = model(edge_index, node_ids)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
