"""Gradient of a quadratic form w.r.t. its input (pytorch/pytorch#22860): x is created
with requires_grad=True and then moved with `x = x.to(device)`. On a GPU that
returns a new non-leaf tensor, so x.grad is None after backward while the CPU
version works. On CPU here the same rebinding happens through the dtype argument.
"""
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x"
EXPECT = "grad_none"


def get_device_and_dtype(prefer_double=True):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    dtype = torch.float64 if prefer_double else torch.float32
    return device, dtype


def run():
    torch.manual_seed(0)
    x = torch.tensor(
        [[1., 2., 3., 4.],
         [5., 6., 7., 8.],
         [9., 10., 11., 12.]], requires_grad=True)
    device, dtype = get_device_and_dtype()
    x = x.to(device=device, dtype=dtype)  # <-- CUT
    function = 10 * (x ** 2).sum()
    function.backward()
    return {"x": x, "function": function}
