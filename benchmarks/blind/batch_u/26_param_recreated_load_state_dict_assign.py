"""load_state_dict(..., assign=True) (added in pytorch/pytorch#102212; its tutorial warns
the optimizer must be created after loading): a resume routine builds the optimizer,
then restores the checkpoint with assign=True, which swaps in new Parameter objects.
The model trains its new parameters, but the optimizer's stale first parameter never
receives a gradient, so opt.step() silently does nothing."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def resume(model, opt_cls, checkpoint):
    opt = opt_cls(model.parameters(), lr=1e-2)
    model.load_state_dict(checkpoint["model"], assign=True)  # <-- CUT
    return opt


def run():
    torch.manual_seed(0)
    ckpt = {"model": {k: v.clone() for k, v in Regressor().state_dict().items()}}
    model = Regressor()
    opt = resume(model, torch.optim.Adam, ckpt)
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
