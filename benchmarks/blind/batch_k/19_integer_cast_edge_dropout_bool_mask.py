"""Graph classifier with a learned edge-dropping module (keep probability per edge from an
edge scorer). The keep mask is made by casting (p + 0.5) to int64 and then to bool before indexing the
edge list, so message passing trains but model.edge_scorer.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.edge_scorer.weight"
EXPECT = "grad_none"


class MessagePassing(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.msg, self.upd = nn.Linear(d, d), nn.Linear(2 * d, d)

    def forward(self, h, src, dst):
        agg = torch.zeros_like(h).index_add(0, dst, self.msg(h[src]))
        return F.relu(self.upd(torch.cat([h, agg], -1)))


class LearnedEdgeDropGNN(nn.Module):
    def __init__(self, d_in=5, d=16, n_cls=2):
        super().__init__()
        self.enc = nn.Linear(d_in, d)
        self.edge_scorer = nn.Linear(2 * d, 1)
        self.mp1, self.mp2 = MessagePassing(d), MessagePassing(d)
        self.head = nn.Linear(d, n_cls)

    def forward(self, x, edge_index):
        h = self.enc(x)
        src, dst = edge_index
        keep_p = torch.sigmoid(self.edge_scorer(torch.cat([h[src], h[dst]], -1))).squeeze(-1)
        keep = (keep_p + 0.5).to(torch.int64).bool()  # <-- CUT
        src, dst = src[keep], dst[keep]
        h = self.mp2(self.mp1(h, src, dst), src, dst)
        return self.head(h.mean(0, keepdim=True))


def run():
    torch.manual_seed(0)
    model = LearnedEdgeDropGNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(10, 5)
    edge_index = torch.randint(0, 10, (2, 30))
    loss = F.cross_entropy(model(x, edge_index), torch.tensor([1]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
