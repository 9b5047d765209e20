"""Control: causal attention masks the raw scores in place with
scores.masked_fill_(mask, -inf) before the softmax and uses ReLU(inplace=True)
after a Linear; neither tensor is saved for backward, so training is fine.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "q.weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    q, k = nn.Linear(6, 6), nn.Linear(6, 6)
    ff = nn.Sequential(nn.Linear(6, 12), nn.ReLU(inplace=True), nn.Linear(12, 6))
    x = torch.randn(2, 5, 6)
    scores = q(x) @ k(x).transpose(1, 2) / 6 ** 0.5
    mask = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
    scores.masked_fill_(mask, float("-inf"))
    out = ff(torch.softmax(scores, dim=-1) @ x)
    loss = F.mse_loss(out, x)  # <-- CUT
    loss.backward()
    return {"q": q, "k": k, "ff": ff, "loss": loss}
