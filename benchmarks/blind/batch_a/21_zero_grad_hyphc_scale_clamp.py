"""Hyperbolic hierarchical clustering (HazyResearch/HypHC#7): self.scale is
initialised to init_size=1e-3 but the forward clamps it with
clamp_min(1e-2).clamp_max(1 - 1e-3). The parameter always sits outside the
clamp range, so model.scale.grad exists but is exactly zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.scale"
EXPECT = "grad_zero"


class HypHC(nn.Module):
    def __init__(self, n_nodes=12, rank=2, init_size=1e-3, max_scale=1. - 1e-3):
        super().__init__()
        self.embeddings = nn.Embedding(n_nodes, rank)
        self.embeddings.weight.data = init_size * (2 * torch.rand(n_nodes, rank) - 1)
        self.scale = nn.Parameter(torch.Tensor([init_size]), requires_grad=True)
        self.init_size, self.max_scale = init_size, max_scale

    def normalize_embeddings(self, embeddings):
        min_scale = 1e-2  # self.init_size
        max_scale = self.max_scale
        return F.normalize(embeddings, p=2, dim=1) * self.scale.clamp_min(min_scale).clamp_max(max_scale)  # <-- CUT

    def loss(self, triple_ids, similarities):
        e = self.normalize_embeddings(self.embeddings(triple_ids))  # (B, 3, rank)
        d12 = (e[:, 0] - e[:, 1]).norm(dim=-1)
        d13 = (e[:, 0] - e[:, 2]).norm(dim=-1)
        d23 = (e[:, 1] - e[:, 2]).norm(dim=-1)
        lca = torch.softmax(-torch.stack([d12, d13, d23], -1) / 0.1, dim=-1)
        return (similarities * (1 - lca)).sum(-1).mean()


def run():
    torch.manual_seed(0)
    model = HypHC()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    triple_ids = torch.randint(0, 12, (16, 3))
    similarities = torch.rand(16, 3)
    loss = model.loss(triple_ids, similarities)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
