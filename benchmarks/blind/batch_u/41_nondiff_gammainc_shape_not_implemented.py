"""pytorch/pytorch#67763 ("torch.special.gammainc backward pass support", gammainc used as a
step between network output and loss): a survival model predicts the Gamma shape per
sample and scores events with the Gamma CDF gammainc(shape, rate * t). The derivative
with respect to the first argument is not implemented, so loss.backward() raises
"the derivative for 'igamma: input' is not implemented"."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class GammaSurvival(nn.Module):
    def __init__(self, d=5):
        super().__init__()
        self.shape_head = nn.Linear(d, 1)
        self.log_rate = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return F.softplus(self.shape_head(x)).squeeze(-1) + 0.5


def censored_nll(model, x, t, event):
    shape = model(x)
    rate = model.log_rate.exp()
    cdf = torch.special.gammainc(shape, rate * t)  # <-- CUT
    surv = (1 - cdf).clamp(min=1e-6)
    return -(event * torch.log(cdf.clamp(min=1e-6)) + (1 - event) * torch.log(surv)).mean()


def run():
    torch.manual_seed(0)
    model = GammaSurvival()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(12, 5)
    t = torch.rand(12) * 3 + 0.1
    event = (torch.rand(12) < 0.7).float()
    loss = censored_nll(model, x, t, event)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
