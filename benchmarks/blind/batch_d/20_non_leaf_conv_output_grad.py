"""Inspecting how gradients flow between layers: the user runs a conv stack,
backprops a loss and prints both input.grad and the intermediate feature map's
.grad. input.grad is filled (it was created with requires_grad=True), the
conv output's .grad is None because it is a non-leaf without retain_grad()
(pytorch/pytorch#2384).
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "output"
EXPECT = "grad_none"


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.Conv2d(3, 16, 5)
        self.head = nn.Sequential(nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 2))

    def forward(self, x):
        output = self.m(x)  # <-- CUT
        return output, self.head(output)


def run():
    torch.manual_seed(0)
    net = Probe()
    input = torch.randn(4, 3, 12, 12, requires_grad=True)
    output, logits = net(input)
    loss = torch.sum(output) + logits.logsumexp(-1).mean()
    net.zero_grad()
    loss.backward()
    grad_stats = {"input": input.grad.abs().mean().item()}
    return {"net": net, "input": input, "output": output, "grad_stats": grad_stats}
