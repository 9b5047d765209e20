"""The dynamic-graph RNN example from the PyTorch README animation (pytorch/pytorch#7301):
the weights W_h and W_x are created with plain torch.randn, none of the tensors
requires grad, yet loss.backward() is called. It raises "element 0 of tensors does
not require grad"; the fix was to add requires_grad=True to the weights.
"""
import torch

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def rnn_cell(W_h, W_x, x, prev_h):
    h2h = torch.mm(W_h, prev_h.t())
    i2h = torch.mm(W_x, x.t())
    next_h = h2h + i2h
    return next_h.tanh().t()


def run():
    torch.manual_seed(0)
    W_h = torch.randn(20, 20)  # <-- CUT
    W_x = torch.randn(20, 10)
    xs = [torch.randn(1, 10) for _ in range(3)]
    h = torch.randn(1, 20)
    for x in xs:
        h = rnn_cell(W_h, W_x, x, h)
    loss = h.sum()
    loss.backward()
    return {"W_h": W_h, "W_x": W_x, "loss": loss}
