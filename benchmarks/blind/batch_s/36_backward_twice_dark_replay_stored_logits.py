"""Dark-experience replay: the trainer stores each batch's inputs and logits in a
replay buffer to distil against later, but stores the logits without detach().
The next step's replay term reaches back into the previous step's freed graph
and backward raises "Trying to backward through the graph a second time"."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ReplayBuffer:
    def __init__(self):
        self.x, self.logits = [], []

    def add(self, x, logits):
        self.x.append(x)
        self.logits.append(logits)  # <-- CUT

    def sample(self):
        return torch.cat(self.x), torch.cat(self.logits)


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    buf = ReplayBuffer()
    for step in range(3):
        x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        if buf.x:
            bx, blogits = buf.sample()
            loss = loss + 0.5 * F.mse_loss(model(bx), blogits)
        opt.zero_grad()
        loss.backward()
        opt.step()
        buf.add(x, logits)
    return {"model": model, "loss": loss}
