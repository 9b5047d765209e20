"""pytorch/pytorch#7860 (".data and .detach", x = a * b then x.detach().zero_()): a
two-factor embedding x = a * b feeds an auxiliary regression head; the author reads
x.data for the head input (copied from a pre-0.4 snippet), so the auxiliary loss
reaches only the head and never the factors: a.grad is None although the head's
weight trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.a"
EXPECT = "grad_none"


class FactorEmbedding(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.a = nn.Parameter(torch.randn(d))
        self.b = nn.Parameter(torch.randn(d))
        self.aux_head = nn.Linear(d, 1)

    def forward(self):
        x = self.a * self.b
        feat = x.data  # <-- CUT
        return self.aux_head(feat)


def run():
    torch.manual_seed(0)
    model = FactorEmbedding()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    target = torch.tensor([1.0])
    opt.zero_grad()
    loss = F.mse_loss(model(), target)
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
