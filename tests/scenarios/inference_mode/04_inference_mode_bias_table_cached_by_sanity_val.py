"""Attention with a continuous position bias MLP (Swin-v2 style) that caches its
bias table on first use. The script runs one sanity validation batch under
torch.inference_mode() before training, which fills the cache; the training
steps add the cached inference tensor (no error), so the bias MLP never trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.attn.cpb[0].weight"
EXPECT = "grad_none"


class CPBAttention(nn.Module):
    def __init__(self, n=8, d=16, heads=2):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.cpb = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, heads))
        rel = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).float() / n
        self.register_buffer("rel", rel[..., None])
        self._bias = None

    def bias_table(self):
        if self._bias is None:
            self._bias = self.cpb(self.rel).permute(2, 0, 1)  # <-- CUT
        return self._bias

    def forward(self, x):
        B, N, D = x.shape
        q, k, v = self.qkv(x).view(B, N, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / self.dh ** 0.5 + self.bias_table()
        y = scores.softmax(-1) @ v
        return self.out(y.transpose(1, 2).reshape(B, N, D))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = CPBAttention()
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.attn(x).mean(1))


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with torch.inference_mode():
        val_acc = (model(torch.randn(4, 8, 16)).argmax(-1) == 0).float().mean()
    for _ in range(2):
        x, y = torch.randn(4, 8, 16), torch.randint(0, 4, (4,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "opt": opt, "loss": loss, "val_acc": val_acc}
