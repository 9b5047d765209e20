"""Style-based GAN EqualLR rewritten as a forward pre-hook: the hook recomputes
module.weight = weight_orig * sqrt(2 / fan_in) before each forward, but reads
weight_orig.data "to avoid building a graph every call". The conv then uses a plain
tensor, and weight_orig, the only registered parameter, gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "D.conv1.weight_orig"
EXPECT = "grad_none"


class EqualLR:
    def __init__(self, name):
        self.name = name

    def compute_weight(self, module):
        weight = getattr(module, self.name + "_orig")
        fan_in = weight.data.size(1) * weight.data[0][0].numel()
        return weight.data * (2 / fan_in) ** 0.5  # <-- CUT

    @staticmethod
    def apply(module, name):
        fn = EqualLR(name)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_orig", nn.Parameter(weight.data))
        module.register_forward_pre_hook(fn)
        return fn

    def __call__(self, module, input):
        setattr(module, self.name, self.compute_weight(module))


def equal_lr(module, name="weight"):
    EqualLR.apply(module, name)
    return module


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        conv1 = nn.Conv2d(3, 8, 3, padding=1)
        conv1.weight.data.normal_()
        conv1.bias.data.zero_()
        self.conv1 = equal_lr(conv1)
        self.linear = nn.Linear(8 * 4 * 4, 1)

    def forward(self, x):
        h = F.leaky_relu(self.conv1(x), 0.2)
        return self.linear(F.avg_pool2d(h, 2).flatten(1))


def run():
    torch.manual_seed(0)
    D = Discriminator()
    opt = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.0, 0.99))
    real, fake = torch.randn(4, 3, 8, 8), torch.randn(4, 3, 8, 8)
    d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()
    opt.zero_grad()
    d_loss.backward()
    opt.step()
    return {"D": D, "d_loss": d_loss}
