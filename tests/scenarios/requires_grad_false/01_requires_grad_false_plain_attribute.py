"""A learnable temperature is stored in __init__ as a plain tensor attribute
(self.log_t = torch.zeros(1)) instead of nn.Parameter: it is not in
model.parameters() and does not require grad, so its .grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.log_t"
EXPECT = "grad_none"


class Calibrated(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(9, 4)
        self.log_t = torch.zeros(1)  # <-- CUT

    def forward(self, x):
        return self.fc(x) / self.log_t.exp()


def run():
    torch.manual_seed(0)
    model = Calibrated()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(11, 9)
    y = torch.randint(0, 4, (11,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
