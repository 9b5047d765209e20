"""Count regressor whose output is passed through torch.round() before the loss so the
predictions are whole numbers. round() is a step function with derivative zero almost
everywhere (as the forum answer explains), so backward succeeds but every weight
gradient of the regressor is exactly zero.
Thread: discuss.pytorch.org/t/torch-round-gradient/28628
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.body[0].weight"
EXPECT = "grad_zero"


class CountRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(4, 1)

    def forward(self, img):
        raw = F.softplus(self.fc(self.body(img).flatten(1))).squeeze(-1) * 10
        return torch.round(raw)  # <-- CUT


def run():
    torch.manual_seed(0)
    model = CountRegressor()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    img = torch.rand(4, 1, 8, 8)
    counts = torch.tensor([3.0, 7.0, 1.0, 4.0])
    pred = model(img)
    loss = F.mse_loss(pred, counts)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "pred": pred}
