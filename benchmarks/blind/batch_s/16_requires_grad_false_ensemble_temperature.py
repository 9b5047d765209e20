"""Temperature scaling of a deep ensemble for calibration: the temperature is
created with torch.ones(1) and handed to the optimizer, but without
requires_grad. The ensemble members (not frozen by mistake) get gradients, the
temperature never does."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "calib.temperature"
EXPECT = "grad_none"


class Calibrator:
    def __init__(self, members):
        self.members = members
        self.temperature = torch.ones(1)  # <-- CUT
        self.opt = torch.optim.SGD([self.temperature], lr=0.01)

    def nll(self, x, y):
        logits = torch.stack([m(x) for m in self.members]).mean(0)
        return F.cross_entropy(logits / self.temperature, y)


def run():
    torch.manual_seed(0)
    members = [nn.Linear(5, 3) for _ in range(3)]
    calib = Calibrator(members)
    x, y = torch.randn(20, 5), torch.randint(0, 3, (20,))
    loss = calib.nll(x, y)
    calib.opt.zero_grad()
    loss.backward()
    calib.opt.step()
    return {"calib": calib, "members": members, "loss": loss}
