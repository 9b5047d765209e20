"""Multi-task model with a shared trunk and two heads: the user backprops the
first task with retain_graph=True, calls opt.step(), then backprops the second
task. step() modified trunk weights saved by the graph, so backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TwoHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 20), nn.ReLU())
        self.cls = nn.Linear(20, 3)
        self.reg = nn.Linear(20, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls(h), self.reg(h)


def run():
    torch.manual_seed(0)
    model = TwoHead()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 10)
    y_cls = torch.randint(0, 3, (8,))
    y_reg = torch.randn(8, 1)
    logits, value = model(x)
    loss_cls = F.cross_entropy(logits, y_cls)
    loss_reg = F.mse_loss(value, y_reg)
    opt.zero_grad()
    loss_cls.backward(retain_graph=True)
    opt.step()  # <-- CUT
    loss_reg.backward()
    opt.step()
    return {"model": model, "loss": loss_reg}
