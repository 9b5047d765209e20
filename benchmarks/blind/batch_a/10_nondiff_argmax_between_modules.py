"""Two-stage model (pytorch/pytorch#1339): the first module's scores are turned
into hard labels with torch.max(y_p, 1)[1] and fed, one-hot encoded, to a second
module. The second module trains; first_model's param.grad is None
("'NoneType' object has no attribute 'data'").
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "first_model[0].weight"
EXPECT = "grad_none"


def forward_pipeline(first_model, second_model, x, n_classes=5):
    y_p = first_model(x)
    y_p = torch.max(y_p, 1)[1]  # <-- CUT
    y_onehot = F.one_hot(y_p, n_classes).float()
    return second_model(y_onehot)


def run():
    torch.manual_seed(0)
    first_model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
    second_model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = torch.optim.SGD(list(first_model.parameters()) + list(second_model.parameters()), lr=0.1)
    x = torch.randn(16, 10)
    target = torch.randint(0, 2, (16,))
    first_model.zero_grad()
    second_model.zero_grad()
    loss = F.cross_entropy(forward_pipeline(first_model, second_model, x), target)
    loss.backward()
    opt.step()
    return {"first_model": first_model, "second_model": second_model, "loss": loss}
