"""XNOR-Net BinActive (jiecaoyu/XNOR-Net-PyTorch#125 asks how to write the custom
backward): the straight-through estimator zeroes the gradient where |input| >= 1.
The binarized conv follows a conv without BatchNorm, whose outputs are all far
above 1 in magnitude, so the STE returns zeros: model.conv1.weight.grad is all zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.conv1.weight"
EXPECT = "grad_zero"


class BinActive(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input.ge(1)] = 0
        grad_input[input.le(-1)] = 0
        return grad_input  # <-- CUT


class BinConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bin_conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = BinActive.apply(x)
        x = F.relu(self.bin_conv2(x))
        return self.fc(x.mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    model = BinConvNet()
    with torch.no_grad():
        model.conv1.bias.fill_(5.0)  # un-normalised activations, no BatchNorm before BinActive
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(4, 3, 8, 8) * 0.1
    y = torch.randint(0, 10, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
