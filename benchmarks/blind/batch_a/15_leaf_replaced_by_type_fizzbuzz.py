"""Numpy-like FizzBuzz network from "Hands-On Deep Learning with PyTorch"
(hhsecond/HandsOnDeepLearningWithPytorch#2): weights are created with
torch.randn(..., requires_grad=True).type(dtype). With dtype a different tensor
type the result is a non-leaf copy, so after backward() w1.grad is None.
"""
import numpy as np
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "w1"
EXPECT = "grad_none"


def binary_encoder(input_size):
    def wrapper(num):
        ret = [int(i) for i in '{0:b}'.format(num)]
        return [0] * (input_size - len(ret)) + ret
    return wrapper


def get_numpy_data(input_size=10, limit=64):
    x, y = [], []
    encoder = binary_encoder(input_size)
    for i in range(limit):
        x.append(encoder(i))
        if i % 15 == 0:
            y.append([1, 0, 0, 0])
        elif i % 5 == 0:
            y.append([0, 1, 0, 0])
        elif i % 3 == 0:
            y.append([0, 0, 1, 0])
        else:
            y.append([0, 0, 0, 1])
    return np.array(x), np.array(y)


def run():
    torch.manual_seed(0)
    dtype = torch.DoubleTensor  # "use float64 for the toy example"
    input_size, hidden_size, output_size, lr = 10, 20, 4, 0.01
    trX, trY = get_numpy_data(input_size)
    x = torch.from_numpy(trX).type(dtype)
    y = torch.from_numpy(trY).type(dtype)
    w1 = torch.randn(input_size, hidden_size, requires_grad=True).type(dtype)  # <-- CUT
    w2 = torch.randn(hidden_size, output_size, requires_grad=True).type(dtype)
    b1 = torch.zeros(1, hidden_size, requires_grad=True).type(dtype)
    b2 = torch.zeros(1, output_size, requires_grad=True).type(dtype)
    a2 = (x.mm(w1) + b1).sigmoid()
    hyp = (a2.mm(w2) + b2).sigmoid()
    error = hyp - y
    output = error.pow(2).sum() / 2.0
    output.backward()
    updated = w1.grad is not None  # the update step is skipped when grads are missing
    return {"w1": w1, "w2": w2, "b1": b1, "b2": b2, "output": output, "updated": updated}
