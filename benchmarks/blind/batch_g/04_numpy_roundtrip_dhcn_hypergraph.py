"""DHCN session recommender: the hypergraph convolution sums the per-layer item
embeddings with np.sum, and the suggested fix for "Can't call numpy() on Tensor
that requires grad" was np.sum(final.detach().numpy(), 0) then torch.from_numpy.
The model trains without errors, but the item embedding table gets no gradient.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embedding.weight"
EXPECT = "grad_none"


class HyperConv(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.layers = layers

    def forward(self, adjacency, embedding):
        item_embeddings = embedding
        final = [item_embeddings]
        for _ in range(self.layers):
            item_embeddings = torch.sparse.mm(adjacency, item_embeddings)
            final.append(item_embeddings)
        final = torch.stack(final)
        item_embeddings = np.sum(final.detach().numpy(), 0) / (self.layers + 1)  # <-- CUT
        return torch.from_numpy(item_embeddings)


class DHCN(nn.Module):
    def __init__(self, adjacency, n_node, emb_size=16, layers=2, beta=0.01):
        super().__init__()
        self.adjacency = adjacency
        self.embedding = nn.Embedding(n_node, emb_size)
        self.pos_embedding = nn.Embedding(20, emb_size)
        self.w_1 = nn.Linear(2 * emb_size, emb_size)
        self.glu1 = nn.Linear(emb_size, emb_size)
        self.glu2 = nn.Linear(emb_size, emb_size, bias=False)
        self.w_2 = nn.Parameter(torch.randn(emb_size, 1) * 0.1)
        self.hyper = HyperConv(layers)
        self.beta = beta

    def session_emb(self, item_emb, session_items, mask):
        seq_h = item_emb[session_items]                      # b, L, d
        L = seq_h.shape[1]
        pos = self.pos_embedding.weight[:L].unsqueeze(0).expand_as(seq_h)
        hs = (seq_h * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
        nh = torch.tanh(self.w_1(torch.cat([pos, seq_h], -1)))
        nh = torch.sigmoid(self.glu1(nh) + self.glu2(hs).unsqueeze(1))
        beta = (nh @ self.w_2) * mask.unsqueeze(-1)
        return (beta * seq_h).sum(1)

    def forward(self, session_items, mask):
        item_emb = self.hyper(self.adjacency, self.embedding.weight)
        sess = self.session_emb(item_emb, session_items, mask)
        scores = sess @ item_emb.t()
        return scores


def build_adjacency(n_node, rng):
    rows = rng.integers(0, n_node, 60)
    cols = rng.integers(0, n_node, 60)
    vals = np.full(60, 0.2, dtype=np.float32)
    idx = torch.tensor(np.stack([rows, cols]), dtype=torch.long)
    return torch.sparse_coo_tensor(idx, torch.from_numpy(vals), (n_node, n_node)).coalesce()


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    n_node = 30
    model = DHCN(build_adjacency(n_node, rng), n_node)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    session_items = torch.tensor(rng.integers(0, n_node, (4, 5)))
    mask = torch.ones(4, 5)
    mask[1, 3:] = 0
    targets = torch.tensor([2, 7, 11, 29])
    scores = model(session_items, mask)
    loss = F.cross_entropy(scores, targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
