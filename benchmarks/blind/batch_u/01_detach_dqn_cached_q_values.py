"""DQN agent (pytorch/pytorch#34535 shape): the agent caches Q-values for epsilon-greedy
acting with .detach() and the learner reuses that cached tensor for the TD loss.
The target is (correctly) computed under no_grad from a target net, so neither side
of the loss requires grad and loss.backward() raises "element 0 of tensors does not
require grad and does not have a grad_fn"."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class QNetwork(nn.Module):
    def __init__(self, n_obs=6, n_act=3, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, n_act)

    def forward(self, s):
        return self.head(self.body(s))


class Agent:
    def __init__(self, cfg):
        self.cfg = cfg
        self.policy_net = QNetwork()
        self.target_net = QNetwork()
        self.target_net.load_state_dict(self.policy_net.state_dict())
        self.optimizer = torch.optim.RMSprop(self.policy_net.parameters(), lr=cfg["lr"])
        self.last_q = None

    def act(self, state, eps):
        q = self.policy_net(state).detach()  # <-- CUT
        self.last_q = q  # kept so the learner does not run the net twice
        greedy = q.argmax(dim=1)
        explore = torch.rand(state.shape[0]) < eps
        random_a = torch.randint(0, q.shape[1], (state.shape[0],))
        return torch.where(explore, random_a, greedy)

    def learn(self, action, reward, next_state, done):
        q_sa = self.last_q.gather(1, action.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_q = self.target_net(next_state).max(1)[0]
            expected = reward + self.cfg["gamma"] * next_q * (1 - done)
        loss = F.smooth_l1_loss(q_sa, expected)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss


def run():
    torch.manual_seed(0)
    agent = Agent({"lr": 1e-3, "gamma": 0.95})
    state = torch.randn(16, 6)
    action = agent.act(state, eps=0.1)
    reward = torch.randn(16)
    next_state = torch.randn(16, 6)
    done = (torch.rand(16) < 0.2).float()
    loss = agent.learn(action, reward, next_state, done)
    return {"agent": agent, "loss": loss}
