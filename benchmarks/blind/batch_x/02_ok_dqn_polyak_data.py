"""Control: DQN with a no_grad Double-DQN target and a Polyak soft update written
through `.data`; both cuts are legitimate and the online network trains.
Thread (from memory): discuss.pytorch.org DQN soft-update '.data copy_ breaks gradients?'."""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "online.net[0].weight"
EXPECT = "grad_ok"


class QNet(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))

    def forward(self, x):
        return self.net(x)


def soft_update(target, source, tau):
    for tp, sp in zip(target.parameters(), source.parameters()):
        tp.data.copy_(tau * sp.data + (1.0 - tau) * tp.data)


def run():
    torch.manual_seed(0)
    online, target = QNet(), QNet()
    target.load_state_dict(online.state_dict())
    opt = torch.optim.Adam(online.parameters(), lr=1e-3)
    s, s2 = torch.randn(16, 4), torch.randn(16, 4)
    a = torch.randint(0, 2, (16,))
    r, done = torch.randn(16), torch.zeros(16)
    q = online(s).gather(1, a.unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_a = online(s2).argmax(1, keepdim=True)
        y = r + 0.99 * (1 - done) * target(s2).gather(1, next_a).squeeze(1)
    loss = nn.functional.smooth_l1_loss(q, y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    grad = online.net[0].weight.grad.clone()
    opt.step()
    soft_update(target, online, tau=0.005)
    return {"online": online, "target": target, "grad": grad}
