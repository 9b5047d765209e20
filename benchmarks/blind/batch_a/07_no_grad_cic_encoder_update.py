"""CIC (contrastive intrinsic control) agent from pixels (rll-research/cic#5):
in update() the observations are encoded inside `with torch.no_grad():`, so the
CNN encoder never gets a gradient during pre-training. The CIC discriminator
trains, but encoder.convnet[0].weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "agent.encoder.convnet[0].weight"
EXPECT = "grad_none"


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.convnet = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(),
                                     nn.Conv2d(8, 8, 3, stride=1), nn.ReLU())

    def forward(self, obs):
        return self.convnet(obs / 255.0 - 0.5).flatten(1)


class CIC(nn.Module):
    def __init__(self, obs_dim, skill_dim=4, hidden=32):
        super().__init__()
        self.state_net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, skill_dim))
        self.next_state_net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, skill_dim))
        self.pred_net = nn.Sequential(nn.Linear(2 * skill_dim, hidden), nn.ReLU(), nn.Linear(hidden, skill_dim))
        self.skill_net = nn.Sequential(nn.Linear(skill_dim, hidden), nn.ReLU(), nn.Linear(hidden, skill_dim))

    def forward(self, state, next_state, skill):
        query = self.skill_net(skill)
        key = self.pred_net(torch.cat([self.state_net(state), self.next_state_net(next_state)], 1))
        return query, key


class CICAgent:
    def __init__(self):
        self.encoder = Encoder()
        self.cic = CIC(obs_dim=8 * 4 * 4)
        self.opt = torch.optim.Adam(list(self.encoder.parameters()) + list(self.cic.parameters()), lr=1e-4)

    def compute_cpc_loss(self, obs, next_obs, skill, temperature=0.5):
        query, key = self.cic(obs, next_obs, skill)
        query, key = F.normalize(query, dim=1), F.normalize(key, dim=1)
        logits = query @ key.T / temperature
        return F.cross_entropy(logits, torch.arange(logits.shape[0]))

    def update(self, batch):
        obs, next_obs, skill = batch
        with torch.no_grad():
            obs, next_obs = self.encoder(obs), self.encoder(next_obs)  # <-- CUT
        loss = self.compute_cpc_loss(obs, next_obs, skill)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    agent = CICAgent()
    obs = torch.randint(0, 256, (8, 3, 13, 13)).float()
    next_obs = torch.randint(0, 256, (8, 3, 13, 13)).float()
    skill = torch.rand(8, 4)
    loss = agent.update((obs, next_obs, skill))
    return {"agent": agent, "loss": loss}
