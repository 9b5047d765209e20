"""Hand-rolled quantization-aware fine-tuning: the optimizer is built for the float
model, then the helper `convert_to_qat()` swaps each nn.Linear for a fake-quant
QuantLinear made with `from_float` (new Parameters, values copied). The new layers
train through autograd, but the optimizer's original fc2.weight gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][2]"
EXPECT = "grad_none"


class FakeQuant(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        return torch.clamp(torch.round(x / scale), -128, 127) * scale

    @staticmethod
    def backward(ctx, g):
        return g, None


class QuantLinear(nn.Linear):
    @classmethod
    def from_float(cls, mod):
        q = cls(mod.in_features, mod.out_features)
        q.load_state_dict(mod.state_dict())
        return q

    def forward(self, x):
        scale = self.weight.detach().abs().max() / 127
        return F.linear(x, FakeQuant.apply(self.weight, scale), self.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def convert_to_qat(model):
    for name in ["fc1", "fc2"]:
        setattr(model, name, QuantLinear.from_float(getattr(model, name)))  # <-- CUT
    return model


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    model = convert_to_qat(model)
    x, y = torch.randn(16, 20), torch.randint(0, 5, (16,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
