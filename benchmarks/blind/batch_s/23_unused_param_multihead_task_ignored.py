"""Multi-head continual learning (task-incremental): forward(x, task_id) should
pick heads[task_id], but a leftover early return always uses heads[0] when the
replay buffer is empty. Training on task 1 therefore never touches heads[1]."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.heads[1].weight"
EXPECT = "grad_none"


class MultiHead(nn.Module):
    def __init__(self, n_tasks=2):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 12), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(12, 2) for _ in range(n_tasks)])

    def forward(self, x, task_id, replay_size):
        h = self.trunk(x)
        if replay_size == 0:
            return self.heads[0](h)  # <-- CUT
        return self.heads[task_id](h)


class ReplayBuffer:
    def __init__(self):
        self.items = []

    def __len__(self):
        return len(self.items)


def run():
    torch.manual_seed(0)
    model = MultiHead()
    buf = ReplayBuffer()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(10, 6), torch.randint(0, 2, (10,))
    loss = F.cross_entropy(model(x, task_id=1, replay_size=len(buf)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
