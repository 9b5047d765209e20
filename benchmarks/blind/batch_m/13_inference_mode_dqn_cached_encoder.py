"""Pixel DQN agent: to save time, observations are encoded once while acting under
torch.inference_mode() and the embeddings are stored in the replay buffer. In
learn() they are `.clone()`d (the fix for "Inference tensors cannot be saved for
backward"); the Q head trains, but the conv encoder never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.encoder[0].weight"
EXPECT = "grad_none"


class PixelDQN:
    def __init__(self, n_act=4, gamma=0.99):
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.Flatten())
        self.q_head = nn.Linear(8 * 3 * 3, n_act)
        self.target_head = nn.Linear(8 * 3 * 3, n_act)
        self.target_head.load_state_dict(self.q_head.state_dict())
        params = list(self.encoder.parameters()) + list(self.q_head.parameters())
        self.opt = torch.optim.Adam(params, lr=1e-4)
        self.gamma, self.buffer = gamma, []

    def act(self, obs, next_obs, r):
        with torch.inference_mode():
            z = self.encoder(obs)  # <-- CUT
            z2 = self.encoder(next_obs)
            a = self.q_head(z).argmax(-1)
        self.buffer.append((z, a, r, z2))

    def learn(self):
        z, a, r, z2 = (torch.cat([b[i] for b in self.buffer]) for i in range(4))
        z, z2 = z.clone(), z2.clone()
        q = self.q_head(z).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = r + self.gamma * self.target_head(z2).max(1).values
        loss = F.smooth_l1_loss(q, target)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    agent = PixelDQN()
    for _ in range(3):
        agent.act(torch.rand(4, 3, 7, 7), torch.rand(4, 3, 7, 7), torch.randn(4))
    loss = agent.learn()
    return {"agent": agent, "loss": loss}
