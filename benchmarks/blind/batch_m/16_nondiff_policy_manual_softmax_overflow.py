"""REINFORCE agent for an Atari-like task with a hand-written softmax over action
logits. Raw pixel values (0-255) are fed without scaling, so some logits exceed
float32's exp range: exp gives inf, inf/inf gives nan probabilities, and the
backward pass under anomaly detection reports "returned nan values".
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class PixelPolicy(nn.Module):
    def __init__(self, n_pix=16, n_act=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_pix, 32), nn.ReLU(), nn.Linear(32, n_act))

    def forward(self, obs):
        logits = self.net(obs)
        e = torch.exp(logits)  # <-- CUT
        return e / e.sum(dim=-1, keepdim=True)


class Reinforce:
    def __init__(self, gamma=0.99):
        self.policy = PixelPolicy()
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=1e-3)
        self.gamma = gamma

    def update(self, frames, actions, rewards):
        probs = self.policy(frames)
        logp = torch.log(probs.gather(1, actions.unsqueeze(1)).squeeze(1))
        g, returns = 0.0, []
        for r in reversed(rewards.tolist()):
            g = r + self.gamma * g
            returns.insert(0, g)
        loss = -(logp * torch.tensor(returns)).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


def run():
    torch.manual_seed(0)
    agent = Reinforce()
    frames = torch.randint(0, 256, (8, 16)).float()
    actions = torch.randint(0, 4, (8,))
    with torch.autograd.detect_anomaly():
        agent.update(frames, actions, torch.ones(8))
    return {"agent": agent}
