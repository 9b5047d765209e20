"""A custom activation with a learnable slope (the "returned an incorrect number of
gradients" message discussed in pytorch/pytorch#137219): forward takes (x, slope) but
backward returns only the input gradient, so loss.backward() raises "function
LeakyStepBackward returned an incorrect number of gradients (expected 2, got 1)"."""
import torch
import torch.nn as nn

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class LeakyStep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, slope):
        ctx.save_for_backward(x, slope)
        return torch.where(x > 0, x, slope * x)

    @staticmethod
    def backward(ctx, grad_out):
        x, slope = ctx.saved_tensors
        grad_x = torch.where(x > 0, grad_out, slope * grad_out)
        return grad_x  # <-- CUT


class Act(nn.Module):
    def __init__(self):
        super().__init__()
        self.slope = nn.Parameter(torch.tensor(0.1))

    def forward(self, x):
        return LeakyStep.apply(x, self.slope)


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 5), Act(), nn.Linear(5, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(6, 5), torch.randn(6, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
