"""MAML with a predefined nn.Module instead of F.linear: the meta-parameters are a deep copy,
and each inner step "loads" them into the model with a loop of model_param = meta_param (the
thread's "shallow copy here"). Rebinding the loop variable changes nothing, the model runs on its
own weights, and torch.autograd.grad(loss, param_copy) raises because param_copy was never used.
Thread: discuss.pytorch.org/t/164439 (Another way to implement MAML).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SmallNet(nn.Module):
    def __init__(self, n_way=3):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 6 * 6, n_way)

    def forward(self, x):
        return self.fc(F.relu(self.conv(x)).flatten(1))


def run():
    torch.manual_seed(0)
    model = SmallNet()
    update_lr = 0.4
    param_copy = [p.detach().clone().requires_grad_() for p in model.parameters()]  # deepcopy of the params
    x = torch.randn(6, 1, 6, 6)
    y = torch.arange(3).repeat(2)
    for _ in range(2):
        for meta_param, model_param in zip(param_copy, model.parameters()):
            model_param = meta_param  # <-- CUT
        out = model(x)
        loss = F.cross_entropy(out, y)
        grad = torch.autograd.grad(loss, param_copy)
        param_copy = list(map(lambda p: p[1] - update_lr * p[0], zip(grad, param_copy)))
    return {"model": model, "param_copy": param_copy}
