"""Regenerates docs/diagram.png (the README screenshot): python docs/diagram.py

A small MLP whose forward takes a detour through NumPy; gradscope's diagram shows the
cut (red dashed, with its line), the inferred link back into torch (dotted) and the
parameters that starve (red).
"""
import os

import torch
from torch import nn

import gradscope


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.from_numpy(h.detach().numpy().clip(0, 1))  # values leave autograd
        return self.fc2(h)


def main(out=os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagram.png")):
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    with gradscope.trace() as tr:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        print(f"loss {loss.item():.3f}")
        opt.step()
    tr.report()
    tr.graph().render(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
