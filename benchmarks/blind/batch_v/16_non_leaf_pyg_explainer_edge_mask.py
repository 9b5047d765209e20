"""GNNExplainer-like saliency in a PyG-style GCN: the explainer builds
`edge_mask = torch.sigmoid(self.edge_logits)` and passes it as edge_weight; after backward the
user reads `explainer.edge_mask.grad` for edge importance. It is a non-leaf, so .grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "explainer.edge_mask"
EXPECT = "grad_none"


class GCNConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, edge_index, edge_weight):
        row, col = edge_index
        deg = torch.zeros(x.size(0)).index_add_(0, col, edge_weight) + 1.0
        norm = edge_weight / deg[col]
        h = self.lin(x)
        return h + torch.zeros_like(h).index_add_(0, col, norm.unsqueeze(1) * h[row])


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = GCNConv(6, 16), GCNConv(16, 3)

    def forward(self, x, edge_index, edge_weight):
        return self.conv2(torch.relu(self.conv1(x, edge_index, edge_weight)), edge_index, edge_weight)


class EdgeExplainer(nn.Module):
    def __init__(self, num_edges):
        super().__init__()
        self.edge_logits = nn.Parameter(torch.randn(num_edges) * 0.1)
        self.edge_mask = None

    def forward(self, model, x, edge_index):
        self.edge_mask = torch.sigmoid(self.edge_logits)  # <-- CUT
        return model(x, edge_index, self.edge_mask)


def run():
    torch.manual_seed(0)
    model = GCN().eval()
    model.requires_grad_(False)
    x = torch.randn(10, 6)
    edge_index = torch.randint(0, 10, (2, 30))
    explainer = EdgeExplainer(edge_index.size(1))
    out = explainer(model, x, edge_index)
    node_idx, target = 3, 1
    loss = -torch.log_softmax(out[node_idx], -1)[target] + 0.01 * explainer.edge_mask.sum()
    loss.backward()
    return {"explainer": explainer, "model": model, "loss": loss}
