"""Test-time adaptation (Tent-style): only BatchNorm affine parameters are
adapted by entropy minimisation. The user re-implemented the BN layer with
F.batch_norm and passed self.weight.data, so the BN scale gets no gradient
(the bias, passed directly, adapts)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.bn.weight"
EXPECT = "grad_none"


class TentBN(nn.BatchNorm1d):
    def forward(self, x):
        w = self.weight.data  # <-- CUT
        return F.batch_norm(x, None, None, w, self.bias, training=True, eps=self.eps)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.bn = TentBN(16)
        self.fc2 = nn.Linear(16, 5)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


def configure_tent(model):
    model.requires_grad_(False)
    params = []
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.weight.requires_grad_(True)
            m.bias.requires_grad_(True)
            params += [m.weight, m.bias]
    return params


def run():
    torch.manual_seed(0)
    model = Net()
    params = configure_tent(model)
    opt = torch.optim.SGD(params, lr=1e-3)
    x = torch.randn(16, 8)
    logits = model(x)
    p = logits.softmax(1)
    loss = -(p * logits.log_softmax(1)).sum(1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
