"""Lightning-style manual optimization with gradient accumulation: the user collects each
micro-batch loss in a list and calls manual_backward on `torch.tensor(step_losses).mean()`.
torch.tensor copies the values into a fresh leaf with no graph, so backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "backward_error"


class LitClassifier(nn.Module):
    def __init__(self, accumulate=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
        self.automatic_optimization = False
        self.accumulate = accumulate
        self.step_losses = []
        self._opt = torch.optim.SGD(self.parameters(), lr=0.1)

    def optimizers(self):
        return self._opt

    def manual_backward(self, loss):
        loss.backward()

    def training_step(self, batch, batch_idx):
        x, y = batch
        self.step_losses.append(F.cross_entropy(self.net(x), y))
        if (batch_idx + 1) % self.accumulate == 0:
            opt = self.optimizers()
            loss = torch.tensor(self.step_losses).mean()  # <-- CUT
            opt.zero_grad()
            self.manual_backward(loss)
            opt.step()
            self.step_losses = []
            return loss


def run():
    torch.manual_seed(0)
    model = LitClassifier()
    out = None
    for i in range(3):
        batch = (torch.randn(8, 8), torch.randint(0, 4, (8,)))
        out = model.training_step(batch, i)
    return {"model": model, "loss": out}
