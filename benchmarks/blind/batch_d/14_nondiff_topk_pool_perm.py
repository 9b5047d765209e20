"""A graph explainer trains two self-designed pooling layers (node and edge
pooling) in front of a frozen GNN. The pooling keeps the nodes with
`score.topk(k).indices` and only indexes x with that permutation; the scores
never multiply the features, so the pooling parameters stay unchanged and their
grads are None (pytorch/pytorch#40983; adapted, unsure).
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "node_pool.score_layer.weight"
EXPECT = "grad_none"


class NodePooling(nn.Module):
    def __init__(self, c, ratio=0.5):
        super().__init__()
        self.score_layer = nn.Linear(c, 1)
        self.ratio = ratio

    def forward(self, x, adj):
        score = self.score_layer(x).squeeze(-1)
        k = max(1, int(self.ratio * x.size(0)))
        perm = score.topk(k).indices  # <-- CUT
        return x[perm], adj[perm][:, perm], perm, score


class GNN(nn.Module):
    def __init__(self, c=6, n_cls=2):
        super().__init__()
        self.lin1 = nn.Linear(c, 8)
        self.readout = nn.Linear(8, n_cls)

    def forward(self, x, adj):
        h = torch.relu(self.lin1(adj @ x + x))
        return self.readout(h.mean(0, keepdim=True))


def run():
    torch.manual_seed(0)
    model = GNN()
    model.requires_grad_(False)  # explained model is fixed
    node_pool = NodePooling(6)
    edge_weight = nn.Parameter(torch.ones(1))
    optimizer = torch.optim.Adam([{"params": node_pool.parameters()}, {"params": [edge_weight]}], lr=1e-2)
    x = torch.randn(10, 6)
    adj = (torch.rand(10, 10) > 0.6).float()
    target = torch.tensor([1])
    for i in range(1, 3):
        optimizer.zero_grad()
        xp, adjp, perm, node_score = node_pool(x, adj)
        out = model(xp, adjp * edge_weight)
        loss = nn.functional.cross_entropy(out, target)
        loss.backward()
        optimizer.step()
    return {"node_pool": node_pool, "model": model, "loss": loss, "edge_weight": edge_weight}
