"""Double DQN update: the target (online-net argmax, target-net evaluation) belongs under
torch.no_grad(), but the user put the block around the whole TD computation, including the
online network's Q(s, a) for the taken actions. The loss has no grad_fn and loss.backward()
raises "element 0 of tensors does not require grad".
Thread: forum "Calculating Various Outputs at the Same Time in RL Tutorial" (2021), adapted.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class QNetwork(nn.Module):
    def __init__(self, obs_dim=4, n_actions=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, n_actions))

    def forward(self, x):
        return self.net(x)


class DoubleDQNAgent:
    def __init__(self, gamma=0.99):
        self.gamma = gamma
        self.online = QNetwork()
        self.target = QNetwork()
        self.target.load_state_dict(self.online.state_dict())
        self.optimizer = torch.optim.Adam(self.online.parameters(), lr=1e-3)

    def update(self, s, a, r, s2, done):
        with torch.no_grad():
            next_a = self.online(s2).argmax(1, keepdim=True)
            q_next = self.target(s2).gather(1, next_a).squeeze(1)
            td_target = r + self.gamma * (1 - done) * q_next
            q_pred = self.online(s).gather(1, a.unsqueeze(1)).squeeze(1)  # <-- CUT
        loss = F.smooth_l1_loss(q_pred, td_target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    agent = DoubleDQNAgent()
    s, s2 = torch.randn(32, 4), torch.randn(32, 4)
    a = torch.randint(0, 3, (32,))
    r, done = torch.randn(32), (torch.rand(32) < 0.1).float()
    loss = agent.update(s, a, r, s2, done)
    return {"agent": agent, "loss": loss}
