"""First-order MAML-style adaptation written after reading the no-grad vs inference-mode
note (pytorch/pytorch#58513: "use no-grad if you are writing an optimizer"): the inner
SGD step that builds the fast weights is wrapped in torch.no_grad(), so the query loss
computed with the fast weights is cut from the meta-parameters: net.w1.grad is None
(only the shared, non-adapted output bias still gets a gradient)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.w1"
EXPECT = "grad_none"


class FunctionalMLP(nn.Module):
    def __init__(self, d_in=5, h=16):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(h, d_in) * 0.3)
        self.w2 = nn.Parameter(torch.randn(1, h) * 0.3)
        self.b2 = nn.Parameter(torch.zeros(1))  # shared across tasks, not adapted

    def forward(self, x, params=None):
        w1, w2 = params if params is not None else (self.w1, self.w2)
        return F.linear(torch.relu(F.linear(x, w1)), w2) + self.b2


def adapt(net, xs, ys, inner_lr=0.05, steps=2):
    params = (net.w1, net.w2)
    for _ in range(steps):
        loss = F.mse_loss(net(xs, params), ys)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            params = tuple(p - inner_lr * g for p, g in zip(params, grads))  # <-- CUT
        params = tuple(p.requires_grad_() for p in params)
    return params


def run():
    torch.manual_seed(0)
    net = FunctionalMLP()
    meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    xs, ys = torch.randn(10, 5), torch.randn(10, 1)
    xq, yq = torch.randn(10, 5), torch.randn(10, 1)
    fast = adapt(net, xs, ys)
    meta_loss = F.mse_loss(net(xq, fast), yq)
    meta_opt.zero_grad()
    meta_loss.backward()
    meta_opt.step()
    return {"net": net, "meta_loss": meta_loss}
