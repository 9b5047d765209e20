"""pytorch-forecasting#689: a custom MyLoss(MultiHorizonMetric), adapted from
QuantileLoss for a Temporal-Fusion-style model, makes training fail with "element 0
of tensors does not require grad and does not have a grad_fn". The per-quantile
losses are concatenated and wrapped in torch.tensor(..., dtype=float32), which copies
the values and drops the graph; the metric then reduces that copy.
"""
import torch
import torch.nn as nn

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class MultiHorizonMetric(nn.Module):
    def __init__(self, quantiles=None, reduction="mean"):
        super().__init__()
        self.quantiles = quantiles
        self.reduction = reduction

    def forward(self, y_pred, target):
        losses = self.loss(y_pred, target)
        return losses.mean() if self.reduction == "mean" else losses.sum()


class MyLoss(MultiHorizonMetric):
    def __init__(self, quantiles=(0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98), **kwargs):
        super().__init__(quantiles=list(quantiles), **kwargs)

    def loss(self, y_pred, target):
        losses = []
        for i, q in enumerate(self.quantiles):
            errors = target - y_pred[..., i]
            weight = 2.0 if q in (0.02, 0.98) else 1.0
            losses.append((weight * torch.max((q - 1) * errors, q * errors)).unsqueeze(-1))
        losses = torch.tensor(torch.cat(losses, dim=2), dtype=torch.float32)  # <-- CUT
        return 2 * losses


class TinyTFT(nn.Module):
    def __init__(self, n_feat=3, hidden=16, horizon=4, output_size=7):
        super().__init__()
        self.lstm = nn.LSTM(n_feat, hidden, batch_first=True)
        self.gate = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, horizon * output_size)
        self.horizon, self.output_size = horizon, output_size

    def forward(self, x):
        h, _ = self.lstm(x)
        h = h[:, -1] * torch.sigmoid(self.gate(h[:, -1]))
        return self.out(h).view(-1, self.horizon, self.output_size)


def run():
    torch.manual_seed(0)
    model = TinyTFT()
    loss_fn = MyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    x, y = torch.randn(4, 10, 3), torch.randn(4, 4)
    loss = loss_fn(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
