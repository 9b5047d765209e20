"""A hand-written single-step RNN stores every layer's output on the module
(self.L0_X, self.L1_H, self.L2_Y). The training code works on a copy of the output with
retain_grad() ("that works"), then inspects model.L2_Y.grad, expecting the same values.
model.L2_Y is the non-leaf output of self.Why and never had retain_grad(): it is None.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.L2_Y"
EXPECT = "grad_none"


class SingleRNN(nn.Module):
    def __init__(self, n_inputs, n_outputsize):
        super().__init__()
        numHU = 2
        bias = False
        self.Wxh = nn.Linear(in_features=n_inputs, out_features=numHU, bias=bias)
        self.Whh = nn.Linear(in_features=numHU + self.Wxh.out_features, out_features=numHU, bias=bias)
        self.Why = nn.Linear(in_features=numHU, out_features=n_outputsize, bias=bias)

    def forward(self, X0, H0):
        self.L0_X = self.Wxh(X0)
        self.L1_H = self.Whh(torch.cat((self.L0_X, H0), dim=1))
        self.L2_Y = self.Why(self.L1_H)  # <-- CUT
        return self.L2_Y, self.L1_H


def run():
    torch.manual_seed(0)
    args = {"device": torch.device("cpu"), "dtype": torch.float}
    model = SingleRNN(n_inputs=3, n_outputsize=2).to(**args)
    X0 = torch.randn(4, 3, **args)
    H0 = torch.zeros(4, 2, **args)
    target = torch.randn(4, 2, **args)
    Y, H1 = model(X0, H0)
    Y_copy = Y.clone()
    Y_copy.retain_grad()
    loss = ((Y_copy - target) ** 2).mean()
    loss.backward()
    grads = {name: p.grad for name, p in model.named_parameters()}
    dY_copy = Y_copy.grad
    return {"model": model, "loss": loss, "grads": grads, "Y_copy": Y_copy, "dY_copy": dY_copy}
