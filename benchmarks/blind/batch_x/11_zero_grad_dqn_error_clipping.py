"""DQN 'error clipping' from the Nature paper implemented as clamp(td_error, -1, 1)
before squaring; with unscaled game rewards (~100) every TD error is beyond the clamp,
so the online network's gradient is exactly zero. The no_grad target is fine.
Thread (from memory): discuss.pytorch.org 'DQN gradients all zero with error clipping'."""
import torch
import torch.nn as nn

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "online.net[0].weight"
EXPECT = "grad_zero"


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))

    def forward(self, x):
        return self.net(x)


def run():
    torch.manual_seed(0)
    online, target = QNet(), QNet()
    target.load_state_dict(online.state_dict())
    opt = torch.optim.RMSprop(online.parameters(), lr=2.5e-4)
    s, s2 = torch.randn(32, 8), torch.randn(32, 8)
    a = torch.randint(0, 4, (32,))
    r = 100.0 + torch.rand(32) * 50.0
    q = online(s).gather(1, a[:, None]).squeeze(1)
    with torch.no_grad():
        y = r + 0.99 * target(s2).max(1).values
    td = torch.clamp(y - q, -1.0, 1.0)  # <-- CUT
    loss = td.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    return {"online": online, "loss": loss}
