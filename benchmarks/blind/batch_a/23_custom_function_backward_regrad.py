"""Custom autograd.Function whose backward() recomputes the output and calls
torch.autograd.grad on it (pytorch/pytorch#45405). Backward runs with grad mode
off, so the recomputed out has no history, autograd.grad(..., allow_unused=True)
returns None, and the function returns None for w: net.w.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.w"
EXPECT = "grad_none"


class func(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x0, w):
        out = torch.sum(x0 * w)
        ctx.save_for_backward(w, x0)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        w, x0 = ctx.saved_tensors
        out = torch.sum(x0 * w)
        out.requires_grad = True
        dfdx = torch.autograd.grad(outputs=out, inputs=x0, grad_outputs=grad_output, allow_unused=True)
        dfdw = torch.autograd.grad(outputs=out, inputs=w, grad_outputs=grad_output, allow_unused=True)
        return dfdx[0], dfdw[0]  # <-- CUT


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.w = nn.Parameter(torch.rand(2, 3))

    def forward(self, x):
        return func.apply(x, self.w)


def main():
    net = Net()
    data = torch.rand(2, 3)
    data.requires_grad = True
    gt = 5
    out = net(data)
    loss = (out - gt) ** 2
    loss.backward()
    return net, data, loss


def run():
    torch.manual_seed(0)
    net, data, loss = main()
    return {"net": net, "data": data, "loss": loss}
