"""The autograd tutorial's TinyModel walkthrough: backward, inspect a slice of
layer2's gradient, take an optimizer step, then call optimizer.zero_grad() and look
at the gradient again. Since PyTorch 2.0 zero_grad() sets grads to None by default, so
the second inspection finds model.layer2.weight.grad is None (the tutorial crashed).
"""
import torch
import torch.nn as nn

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layer2.weight"
EXPECT = "grad_none"

BATCH_SIZE = 16
DIM_IN = 100
HIDDEN_SIZE = 20
DIM_OUT = 10


class TinyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(DIM_IN, HIDDEN_SIZE)
        self.relu = nn.ReLU()
        self.layer2 = nn.Linear(HIDDEN_SIZE, DIM_OUT)

    def forward(self, x):
        return self.layer2(self.relu(self.layer1(x)))


def peek(t, n=10):
    return None if t is None else t[0][0:n].clone()


def run():
    torch.manual_seed(0)
    some_input = torch.randn(BATCH_SIZE, DIM_IN, requires_grad=False)
    ideal_output = torch.randn(BATCH_SIZE, DIM_OUT, requires_grad=False)
    model = TinyModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)

    before = peek(model.layer2.weight.grad)
    prediction = model(some_input)
    loss = (ideal_output - prediction).pow(2).sum()
    loss.backward()
    after_backward = peek(model.layer2.weight.grad)
    optimizer.step()
    weights_after_step = peek(model.layer2.weight.detach())

    optimizer.zero_grad()  # <-- CUT
    after_zero_grad = peek(model.layer2.weight.grad)
    return {"model": model, "optimizer": optimizer, "loss": loss, "before": before,
            "after_backward": after_backward, "after_zero_grad": after_zero_grad,
            "weights_after_step": weights_after_step}
