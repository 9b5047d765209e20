"""Optimizer created before the layer it should train (LaurentMazare/ocaml-torch#36,
ported to PyTorch): the SGD optimizer is built from the model's parameters, then
the linear layer is (re)built once the input size is known. The loss printed every
iteration never changes: forward uses the new layer, the optimizer holds the old one,
whose weight never gets a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "optimizer.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class Regressor(nn.Module):
    def __init__(self, input_dim=1):
        super().__init__()
        self.linear = nn.Linear(input_dim, 1)

    def build(self, input_dim):
        self.linear = nn.Linear(input_dim, 1)  # <-- CUT

    def forward(self, x):
        return self.linear(x)


def run():
    torch.manual_seed(0)
    batch_size = 1
    learning_rate = 1e-3
    xs = 1.0 * torch.ones(batch_size, 2)
    ys = torch.tensor(10.0)
    model = Regressor()
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    model.build(xs.shape[1])
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        ys_ = model(xs)
        loss = ((ys_ - ys) * (ys_ - ys)).sum()
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    return {"model": model, "optimizer": optimizer, "losses": losses}
