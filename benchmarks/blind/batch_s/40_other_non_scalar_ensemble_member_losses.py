"""Deep ensemble trained jointly: the trainer collects one loss per member and
stacks them into a vector "so each member's loss can be logged", then calls
backward() on that vector. backward raises "grad can be implicitly created only
for scalar outputs"; the fix is to sum (or mean) the stacked losses."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "other:non_scalar_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class EnsembleTrainer:
    def __init__(self, n=3):
        self.members = nn.ModuleList([nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2)) for _ in range(n)])
        self.opt = torch.optim.Adam(self.members.parameters(), lr=1e-3)

    def step(self, x, y):
        member_losses = [F.cross_entropy(m(x), y) for m in self.members]
        loss = torch.stack(member_losses)  # <-- CUT
        self.log = [l.item() for l in member_losses]
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = EnsembleTrainer()
    loss = trainer.step(torch.randn(6, 5), torch.randint(0, 2, (6,)))
    return {"trainer": trainer, "loss": loss}
