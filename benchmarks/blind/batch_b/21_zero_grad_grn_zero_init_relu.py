"""Deep cross attention GRN aggregator (lucidrains/deep-cross-attention#2): the
aggregation Linear has no bias and is zero-initialised, then goes through ReLU.
Its output is exactly 0 everywhere and ReLU's gradient at 0 is 0, so
to_aggregate.weight.grad exists but is all zeros and the GRN can never move off zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.grn.to_aggregate.weight"
EXPECT = "grad_zero"


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = dim ** 0.5
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return F.normalize(x, dim=-1) * self.scale * self.gamma


class GRN(nn.Module):
    """Aggregates all previous layer outputs with learned, input-dependent weights."""

    def __init__(self, dim, num_layers, num_outputs=1):
        super().__init__()
        self.norm = RMSNorm(dim)
        self.to_aggregate = nn.Linear(dim, num_outputs, bias=False)
        nn.init.zeros_(self.to_aggregate.weight)
        self.num_layers = num_layers

    def forward(self, hiddens):
        stacked = torch.stack(hiddens)                     # (L, B, N, D)
        weights = F.relu(self.to_aggregate(self.norm(hiddens[-1])))  # <-- CUT
        return stacked[-1] + torch.einsum('bno,lbnd->bnd', weights, stacked) / self.num_layers


class DCATransformer(nn.Module):
    def __init__(self, dim=16, depth=3, vocab=30):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU()) for _ in range(depth))
        self.grn = GRN(dim, depth + 1)
        self.to_logits = nn.Linear(dim, vocab)

    def forward(self, ids):
        h = self.embed(ids)
        hiddens = [h]
        for layer in self.layers:
            h = h + layer(h)
            hiddens.append(h)
        return self.to_logits(self.grn(hiddens))


def run():
    torch.manual_seed(0)
    model = DCATransformer()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    ids = torch.randint(0, 30, (2, 8))
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 30), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
