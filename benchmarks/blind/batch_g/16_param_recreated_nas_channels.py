"""One-shot NAS supernet: after warm-up the search handler calls
increase_conv_channels(), which instantiates a wider nn.Conv2d per cell and
copies the old weights in with .data. The architecture/weight optimizers were
built before, so they still hold the old conv weights, which never get a grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model_optimizer.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class MixedOp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c, affine=False)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class SuperNet(nn.Module):
    def __init__(self, c=4, n_cells=2, n_cls=5):
        super().__init__()
        self.cells = nn.ModuleList([MixedOp(c) for _ in range(n_cells)])
        self.arch_alpha = nn.Parameter(torch.zeros(n_cells))
        self.head = nn.Linear(c, n_cls)

    def forward(self, x):
        w = torch.softmax(self.arch_alpha, 0)
        for wi, cell in zip(w, self.cells):
            x = x + wi * cell(x)
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))

    def model_weights(self):
        return [p for n, p in self.named_parameters() if n != "arch_alpha"]


def increase_conv_channels(op: MixedOp, k=1.0):
    old = op.conv
    new_conv = nn.Conv2d(old.in_channels, old.out_channels, 3, padding=1, bias=False)
    new_conv.weight.data = old.weight.data * k
    op.conv = new_conv  # <-- CUT


class SearchSpaceHandler:
    def __init__(self, growth=1.0):
        self.growth = growth

    def adapt(self, model):
        for cell in model.cells:
            increase_conv_channels(cell, self.growth)


def run():
    torch.manual_seed(0)
    model = SuperNet()
    model_optimizer = torch.optim.SGD(model.model_weights(), lr=0.025, momentum=0.9)
    arch_optimizer = torch.optim.Adam([model.arch_alpha], lr=3e-4)

    x = torch.randn(2, 4, 8, 8)
    y = torch.tensor([1, 3])
    SearchSpaceHandler().adapt(model)       # "perturb" phase after warm-up
    loss = F.cross_entropy(model(x), y)
    model_optimizer.zero_grad()
    arch_optimizer.zero_grad()
    loss.backward()
    model_optimizer.step()
    arch_optimizer.step()
    return {"model": model, "model_optimizer": model_optimizer, "loss": loss}
