"""Dueling DQN: forward computes the value stream V(s) but returns only the
mean-centred advantages, so the value stream never enters Q and gets no gradient;
the target network is filled by load_state_dict and used under no_grad.
Thread: carpedm20/deep-rl-tensorflow#6 (dueling value/advantage streams wired wrong)."""
import torch
import torch.nn as nn

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "online.value_stream[0].weight"
EXPECT = "grad_none"


class DuelingQNet(nn.Module):
    def __init__(self, obs_dim=8, n_actions=4, hidden=64):
        super().__init__()
        self.feature = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.value_stream = nn.Sequential(nn.Linear(hidden, 32), nn.ReLU(), nn.Linear(32, 1))
        self.adv_stream = nn.Sequential(nn.Linear(hidden, 32), nn.ReLU(), nn.Linear(32, n_actions))

    def forward(self, x):
        h = self.feature(x)
        v = self.value_stream(h)
        adv = self.adv_stream(h)
        return adv - adv.mean(dim=1, keepdim=True)  # <-- CUT


def run():
    torch.manual_seed(0)
    online, target = DuelingQNet(), DuelingQNet()
    target.load_state_dict(online.state_dict())
    opt = torch.optim.Adam(online.parameters(), lr=1e-4)
    s, s2 = torch.randn(32, 8), torch.randn(32, 8)
    a = torch.randint(0, 4, (32,))
    r, done = torch.randn(32), torch.zeros(32)
    q = online(s).gather(1, a[:, None]).squeeze(1)
    with torch.no_grad():
        y = r + 0.99 * (1 - done) * target(s2).max(1).values
    loss = nn.functional.mse_loss(q, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"online": online, "target": target}
