"""Global magnitude pruning at 60% sparsity across layers whose init scales
differ a lot: every weight of the small-init bottleneck layer falls under the
global threshold, its mask is all zeros and weight * mask gives that layer an
all-zero gradient (the other layers train normally).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.bottleneck.weight"
EXPECT = "grad_zero"


class MaskedLinear(nn.Linear):
    def __init__(self, i, o, init_std):
        super().__init__(i, o)
        nn.init.normal_(self.weight, std=init_std)
        self.register_buffer("mask", torch.ones(o, i))

    def forward(self, x):
        w = self.weight * self.mask  # <-- CUT
        return F.linear(x, w, self.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in = MaskedLinear(16, 64, init_std=0.5)
        self.bottleneck = MaskedLinear(64, 8, init_std=0.001)
        self.fc_out = MaskedLinear(8, 4, init_std=0.5)

    def forward(self, x):
        return self.fc_out(F.relu(self.bottleneck(F.relu(self.fc_in(x)))))


def global_prune(model, sparsity):
    layers = [m for m in model.modules() if isinstance(m, MaskedLinear)]
    all_w = torch.cat([m.weight.detach().abs().flatten() for m in layers])
    thr = all_w.kthvalue(int(sparsity * all_w.numel())).values
    for m in layers:
        m.mask.copy_((m.weight.detach().abs() > thr).float())


def run():
    torch.manual_seed(0)
    model = Net()
    global_prune(model, 0.6)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(16, 16), torch.randint(0, 4, (16,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
