"""A3C worker: during the rollout each step's (state, log_prob, reward) is
appended to self.memory; at update time the worker stacks them with
`torch.tensor([t[1] for t in self.memory])`, which copies the values. The critic
still trains, the actor gets no gradient
(Quantum-Cheese/DeepReinforcementLearning_Pytorch#1).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "worker.actor.fc2.weight"
EXPECT = "grad_none"


class Actor(nn.Module):
    def __init__(self, s=4, a=2):
        super().__init__()
        self.fc1 = nn.Linear(s, 16)
        self.fc2 = nn.Linear(16, a)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=-1)


class Worker:
    def __init__(self, gamma=0.99):
        self.actor = Actor()
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
        self.optimizer = torch.optim.Adam(list(self.actor.parameters()) + list(self.critic.parameters()), lr=1e-3)
        self.gamma = gamma
        self.memory = []

    def act(self, state):
        probs = self.actor(state)
        dist = torch.distributions.Categorical(probs)
        action = dist.sample()
        return action, dist.log_prob(action)

    def learn(self):
        states = torch.stack([t[0] for t in self.memory])
        log_probs = torch.tensor([t[1] for t in self.memory], dtype=torch.float)  # <-- CUT
        returns, g = [], 0.0
        for t in reversed(self.memory):
            g = t[2] + self.gamma * g
            returns.insert(0, g)
        returns = torch.tensor(returns)
        values = self.critic(states).squeeze(-1)
        advantage = returns - values
        actor_loss = -(log_probs * advantage.detach()).mean()
        critic_loss = advantage.pow(2).mean()
        self.optimizer.zero_grad()
        (actor_loss + critic_loss).backward()
        self.optimizer.step()
        self.memory = []
        return actor_loss, critic_loss


def run():
    torch.manual_seed(0)
    worker = Worker()
    state = torch.randn(4)
    for step in range(5):
        action, log_prob = worker.act(state)
        reward = 1.0 if action.item() == 0 else 0.0
        worker.memory.append((state, log_prob, reward))
        state = torch.randn(4)
    actor_loss, critic_loss = worker.learn()
    return {"worker": worker, "actor_loss": actor_loss, "critic_loss": critic_loss}
