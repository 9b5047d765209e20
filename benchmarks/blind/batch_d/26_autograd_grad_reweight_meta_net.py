"""Learning-to-reweight: the meta step takes a virtual SGD step on a copy of
the network with `torch.autograd.grad(l_f_meta, meta_net.params(), create_graph=True)`
and differentiates the clean-set loss w.r.t. the per-example weights eps.
The user checks meta_net's parameters after the step: their .grad is None, so it
looks as if meta_net is never updated (danieltan07/learning-to-reweight-examples#3).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "meta_net.w1"
EXPECT = "grad_none"


class MetaNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(6, 8) * 0.3)
        self.w2 = nn.Parameter(torch.randn(8, 1) * 0.3)
        self.fast = None

    def params(self):
        return [self.w1, self.w2]

    def update_params(self, lr, source_params):
        self.fast = [p - lr * g for p, g in zip(self.params(), source_params)]

    def forward(self, x, use_fast=False):
        w1, w2 = self.fast if use_fast else self.params()
        return (torch.relu(x @ w1) @ w2).squeeze(-1)


def run():
    torch.manual_seed(0)
    meta_net = MetaNet()
    x, y = torch.randn(8, 6), (torch.rand(8) > 0.5).float()
    x_val, y_val = torch.randn(4, 6), (torch.rand(4) > 0.5).float()
    eps = torch.zeros(8, requires_grad=True)
    cost = F.binary_cross_entropy_with_logits(meta_net(x), y, reduction="none")
    l_f_meta = torch.sum(cost * eps)
    meta_net.zero_grad()
    grads = torch.autograd.grad(l_f_meta, meta_net.params(), create_graph=True)  # <-- CUT
    meta_net.update_params(0.001, source_params=grads)
    y_g_hat = meta_net(x_val, use_fast=True)
    l_g_meta = F.binary_cross_entropy_with_logits(y_g_hat, y_val)
    grad_eps = torch.autograd.grad(l_g_meta, eps, only_inputs=True)[0]
    w_tilde = torch.clamp(-grad_eps, min=0)
    w = w_tilde / (w_tilde.sum() + 1e-8)
    return {"meta_net": meta_net, "w": w, "eps": eps}
