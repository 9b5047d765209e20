"""Control: Double-DQN target. The next-state action is chosen with argmax of
the online net and evaluated by the target net, all under torch.no_grad();
the TD loss trains the online net, whose gradient is non-zero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "online[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    online = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    target_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
    target_net.load_state_dict(online.state_dict())
    opt = torch.optim.Adam(online.parameters(), lr=1e-3)
    s, s2 = torch.randn(16, 4), torch.randn(16, 4)
    a = torch.randint(0, 2, (16,))
    r, done = torch.randn(16), (torch.rand(16) < 0.1).float()
    with torch.no_grad():
        a2 = online(s2).argmax(dim=1, keepdim=True)
        q_next = target_net(s2).gather(1, a2).squeeze(1)
        y = r + 0.99 * (1 - done) * q_next
    q = online(s).gather(1, a.unsqueeze(1)).squeeze(1)
    loss = F.smooth_l1_loss(q, y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"online": online, "target_net": target_net, "loss": loss}
