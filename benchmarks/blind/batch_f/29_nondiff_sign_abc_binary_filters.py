"""Ported from layog/Accurate-Binary-Convolution-Network#6 (TensorFlow; "No weight update due to
sign function"): the ABC layer builds binary bases as sign(W + shift * std(W)) without an
identity (straight-through) gradient override. The shift parameters reach the loss only through
sign(), whose derivative is zero: abc1.shift_parameters.grad is all zeros; only betas learn.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.abc1.shift_parameters"
EXPECT = "grad_zero"


class ABCConv2d(nn.Module):
    def __init__(self, cin, cout, k=3, n_bases=3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k) * 0.1)
        self.shift_parameters = nn.Parameter(torch.linspace(-1, 1, n_bases))
        self.beta_values = nn.Parameter(torch.ones(n_bases) / n_bases)
        self.n_bases = n_bases

    def forward(self, x):
        w = self.weight
        centered = w - w.mean()
        expanded_stddev = self.shift_parameters.view(-1, 1, 1, 1, 1) * centered.std()
        tiled_filters = centered.unsqueeze(0).expand(self.n_bases, *w.shape)
        binarized_filters = torch.sign(tiled_filters + expanded_stddev)  # <-- CUT
        out = 0
        for i in range(self.n_bases):
            out = out + self.beta_values[i] * F.conv2d(x, binarized_filters[i], padding=1)
        return out


class ABCNet(nn.Module):
    def __init__(self, n_cls=10):
        super().__init__()
        self.abc1 = ABCConv2d(1, 8)
        self.bn1 = nn.BatchNorm2d(8)
        self.abc2 = ABCConv2d(8, 8)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc1 = nn.Linear(8 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, n_cls)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.abc1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.abc2(x))), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def run():
    torch.manual_seed(0)
    model = ABCNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.randn(4, 1, 16, 16)
    labels = torch.tensor([3, 1, 7, 0])
    loss = F.cross_entropy(model(images), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
