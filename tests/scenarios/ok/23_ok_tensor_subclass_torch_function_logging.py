"""Control: inputs are wrapped in a `torch.Tensor` subclass whose `__torch_function__`
counts the ops it sees (a shape/op-logging tool). Outputs stay subclass
instances; autograd is untouched, so the model trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


class OpCounter(torch.Tensor):
    counts = {}

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func))
        cls.counts[name] = cls.counts.get(name, 0) + 1
        return super().__torch_function__(func, types, args, kwargs or {})


def run():
    torch.manual_seed(0)
    OpCounter.counts = {}
    model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(9, 6).as_subclass(OpCounter)
    y = torch.randn(9, 1)
    loss = F.mse_loss(model(x), y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
