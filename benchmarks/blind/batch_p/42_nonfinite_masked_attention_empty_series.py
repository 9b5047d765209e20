"""Attention pooling over the observed time steps of each series in a batch. The
padding mask fills unobserved steps with -inf before softmax; one series in the
batch has no observed steps at all, so its whole row is -inf, softmax gives NaN,
and the NaN pooled vector makes the head weight gradient NaN.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head.weight"
EXPECT = "grad_nonfinite"


class AttentionPoolForecaster(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.embed = nn.Linear(2, d)
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.query = nn.Parameter(torch.randn(1, 1, d) * 0.1)
        self.head = nn.Linear(d, 1)

    def forward(self, values, observed):
        x = self.embed(torch.stack([values, observed.float()], -1))
        q = self.q_proj(self.query.expand(x.shape[0], -1, -1))
        k = self.k_proj(x)
        scores = (q @ k.transpose(1, 2)).squeeze(1) / k.shape[-1] ** 0.5
        scores = scores.masked_fill(~observed, float("-inf"))  # <-- CUT
        attn = F.softmax(scores, dim=-1)
        pooled = (attn.unsqueeze(-1) * x).sum(1)
        return self.head(pooled).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = AttentionPoolForecaster()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    values = torch.randn(4, 10)
    observed = torch.rand(4, 10) > 0.3
    observed[2] = False  # a newly added store with no history yet
    values = values * observed
    target = torch.randn(4)
    pred = model(values, observed)
    loss = F.mse_loss(pred, target)
    opt.zero_grad()
    loss.backward()
    return {"model": model, "loss": loss, "pred": pred}
