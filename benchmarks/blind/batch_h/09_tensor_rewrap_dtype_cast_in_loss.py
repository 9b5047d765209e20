"""Mixed-precision regression: the model emits bfloat16 outputs on some paths, so
the user's loss class "normalises" its inputs with torch.tensor(pred, dtype=torch.float32)
instead of pred.float() (the thread asks whether type conversion is differentiable; .float()
is, a torch.tensor copy is not). Nothing in the loss requires grad and backward raises.
Thread: discuss.pytorch.org/t/is-the-type-conversion-differentiable/45436
"""
import torch
import torch.nn as nn

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SafeHuberLoss(nn.Module):
    def __init__(self, delta=1.0):
        super().__init__()
        self.delta = delta

    def forward(self, pred, target):
        pred = torch.tensor(pred, dtype=torch.float32)  # <-- CUT
        target = torch.as_tensor(target, dtype=torch.float32)
        err = (pred - target).abs()
        quad = torch.clamp(err, max=self.delta)
        return (0.5 * quad ** 2 + self.delta * (err - quad)).mean()


class Regressor(nn.Module):
    def __init__(self, half_head=True):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.head = nn.Linear(16, 1)
        self.half_head = half_head

    def forward(self, x):
        y = self.head(self.body(x)).squeeze(-1)
        return y.to(torch.bfloat16) if self.half_head else y


def run():
    torch.manual_seed(0)
    model = Regressor()
    criterion = SafeHuberLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(8, 6)
    target = torch.randn(8).tolist()
    loss = criterion(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
