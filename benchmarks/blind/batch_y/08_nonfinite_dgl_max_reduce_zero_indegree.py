"""Hand-written GraphSAGE-pool layer (DGL style, max reducer) on a molecule batch. The max reduction
starts from -inf, so an atom with no incoming edges keeps an all -inf neighbour feature; it goes into
the concat + Linear and the cross-entropy, and model.classify.weight.grad comes back nan/inf
(the DGL builtin max gave -inf for zero in-degree nodes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.classify.weight"
EXPECT = "grad_nonfinite"


class Graph:
    def __init__(self, src, dst, num_nodes):
        self.src, self.dst, self.num_nodes = src, dst, num_nodes
        self.ndata = {}

    def update_all_max(self, feat_key, out_key):
        msg = self.ndata[feat_key][self.src]
        index = self.dst.unsqueeze(1).expand_as(msg)
        out = torch.full((self.num_nodes, msg.shape[1]), float("-inf"))  # <-- CUT
        out = out.scatter_reduce(0, index, msg, reduce="amax", include_self=True)
        self.ndata[out_key] = out


class SAGEPool(nn.Module):
    def __init__(self, in_feats, out_feats):
        super().__init__()
        self.fc_pool = nn.Linear(in_feats, in_feats)
        self.fc_self = nn.Linear(in_feats, out_feats)
        self.fc_neigh = nn.Linear(in_feats, out_feats)

    def forward(self, g, h):
        g.ndata["h"] = F.relu(self.fc_pool(h))
        g.update_all_max("h", "neigh")
        return F.relu(self.fc_self(h) + self.fc_neigh(g.ndata["neigh"]))


class NodeClassifier(nn.Module):
    def __init__(self, in_feats=6, hid=8, n_cls=3):
        super().__init__()
        self.conv = SAGEPool(in_feats, hid)
        self.classify = nn.Linear(hid, n_cls)

    def forward(self, g, h):
        return self.classify(self.conv(g, h))


def run():
    torch.manual_seed(0)
    # two molecules batched; node 5 (a counter-ion) has no incoming edges
    src = torch.tensor([0, 1, 1, 2, 3, 4])
    dst = torch.tensor([1, 0, 2, 1, 4, 3])
    g = Graph(src, dst, num_nodes=6)
    feats = torch.randn(6, 6)
    labels = torch.tensor([0, 1, 2, 0, 1, 2])
    model = NodeClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    logits = model(g, feats)
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    return {"model": model, "g": g, "logits": logits, "loss": loss}
