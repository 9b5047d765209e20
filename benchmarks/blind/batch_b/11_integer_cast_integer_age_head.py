"""Integer-valued forecasts (sktime/pytorch-forecasting#862: "make the model know
that I will use the rounded prediction"): the demand head's output is rounded
and cast with .int() inside forward so the loss sees integer counts. The
classification head still trains; model.count_head.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.count_head.weight"
EXPECT = "grad_none"


class DemandModel(nn.Module):
    def __init__(self, n_feat=12, hidden=32, n_regimes=3):
        super().__init__()
        self.encoder = nn.GRU(n_feat, hidden, batch_first=True)
        self.count_head = nn.Linear(hidden, 1)
        self.regime_head = nn.Linear(hidden, n_regimes)

    def forward(self, x):
        _, h = self.encoder(x)
        h = h[-1]
        counts = F.softplus(self.count_head(h)).squeeze(-1) * 20
        counts = torch.round(counts).int()  # <-- CUT
        return counts, self.regime_head(h)


def run():
    torch.manual_seed(0)
    model = DemandModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(8, 5, 12)
    y_count = torch.randint(0, 40, (8,)).float()
    y_regime = torch.randint(0, 3, (8,))
    counts, regime_logits = model(x)
    loss = F.l1_loss(counts.float(), y_count) + F.cross_entropy(regime_logits, y_regime)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
