"""Local attention with a learnable window size: the additive attention mask is
`torch.where(dist <= self.window, 0.0, -1e4)`. The comparison carries no
gradient, so the model trains but the window never moves:
model.attn.window.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.attn.window"
EXPECT = "grad_none"


class WindowAttention(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.window = nn.Parameter(torch.tensor(3.0))

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        n = x.shape[1]
        pos = torch.arange(n, dtype=x.dtype)
        dist = (pos[:, None] - pos[None, :]).abs()
        mask = torch.where(dist <= self.window, 0.0, -1e4)  # <-- CUT
        attn = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + mask).softmax(-1)
        return attn @ v


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 16)
        self.attn = WindowAttention()
        self.out = nn.Linear(16, 5)

    def forward(self, tokens):
        return self.out(self.attn(self.emb(tokens)))


def run():
    torch.manual_seed(0)
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, tags = torch.randint(0, 30, (4, 10)), torch.randint(0, 5, (4, 10))
    loss = F.cross_entropy(model(tokens).flatten(0, 1), tags.flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
