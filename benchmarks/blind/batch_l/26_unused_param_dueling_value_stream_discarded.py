"""Dueling DQN. After a refactor of forward, the value stream is still called but its
result is not assigned, and the return line only centres the advantages. Training runs
(the target net under no_grad, Huber loss), the advantage stream and trunk learn, and
the value stream's weights never get a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "online.value_stream[0].weight"
EXPECT = "grad_none"


class DuelingQNet(nn.Module):
    def __init__(self, n_obs=8, n_act=4, h=64):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_obs, h), nn.ReLU())
        self.value_stream = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, 1))
        self.adv_stream = nn.Sequential(nn.Linear(h, h), nn.ReLU(), nn.Linear(h, n_act))

    def forward(self, s):
        h = self.trunk(s)
        self.value_stream(h)  # <-- CUT
        adv = self.adv_stream(h)
        return adv - adv.mean(dim=1, keepdim=True)


def run():
    torch.manual_seed(0)
    online, target = DuelingQNet(), DuelingQNet()
    target.load_state_dict(online.state_dict())
    opt = torch.optim.Adam(online.parameters(), lr=1e-4)
    s, s2 = torch.randn(32, 8), torch.randn(32, 8)
    a = torch.randint(0, 4, (32,))
    r = torch.randn(32)
    done = (torch.rand(32) < 0.1).float()
    q = online(s).gather(1, a.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        a2 = online(s2).argmax(1, keepdim=True)
        y = r + 0.99 * (1 - done) * target(s2).gather(1, a2).squeeze(1)
    loss = F.smooth_l1_loss(q, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"online": online, "target": target, "loss": loss}
