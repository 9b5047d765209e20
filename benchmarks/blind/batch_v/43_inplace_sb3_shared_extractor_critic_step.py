"""SAC with one features extractor shared by actor and critic and optimised by the critic
optimizer too (the set-up SB3's PR #198 stopped doing). Features are computed once; the critic
step runs (retain_graph=True added after the first error), then the actor loss backward finds
the extractor and Q weights it saved modified in place by critic_opt.step().
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SharedSAC(nn.Module):
    def __init__(self, obs_dim=8, act_dim=2, fdim=16):
        super().__init__()
        self.features_extractor = nn.Sequential(nn.Linear(obs_dim, fdim), nn.ReLU())
        self.actor = nn.Sequential(nn.Linear(fdim, act_dim), nn.Tanh())
        self.qf = nn.Sequential(nn.Linear(fdim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def q(self, features, actions):
        return self.qf(torch.cat([features, actions], 1))


def run():
    torch.manual_seed(0)
    policy = SharedSAC()
    critic_opt = torch.optim.Adam(list(policy.features_extractor.parameters()) + list(policy.qf.parameters()), lr=3e-4)
    actor_opt = torch.optim.Adam(policy.actor.parameters(), lr=3e-4)
    obs, act = torch.randn(16, 8), torch.rand(16, 2) * 2 - 1
    with torch.no_grad():
        target_q = torch.randn(16, 1)

    features = policy.features_extractor(obs)
    critic_loss = F.mse_loss(policy.q(features, act), target_q)
    actor_loss = -policy.q(features, policy.actor(features)).mean()

    critic_opt.zero_grad()
    critic_loss.backward(retain_graph=True)
    critic_opt.step()  # <-- CUT
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    return {"policy": policy, "actor_loss": actor_loss}
