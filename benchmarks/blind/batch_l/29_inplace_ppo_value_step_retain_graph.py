"""Per-step PPO variant: at each time step the V and Q function approximators are fitted
with their own SGD step (retain_graph=True, as suggested for "backward through the
graph a second time"), and the clipped surrogate, built from the undetached advantage
Q - V, is summed for one policy update at episode end. That backward needs V's and Q's
old weights, which their optimizer.step() calls modified in place, so it raises.
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ValueFunction(nn.Module):
    def __init__(self, d_in, lr=1e-2):
        super().__init__()
        self.fc1 = nn.Linear(d_in, 16)
        self.fc2 = nn.Linear(16, 1)
        self.optimizer = torch.optim.SGD(self.parameters(), lr=lr)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))).squeeze(-1)

    def mse_loss(self, pred, target):
        return (pred - target).pow(2).mean()

    def sgd(self, loss):
        self.optimizer.zero_grad()
        loss.backward(retain_graph=True)
        self.optimizer.step()  # <-- CUT


class PolicyNetwork(nn.Module):
    def __init__(self, n_obs, n_act, eps=0.2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs, 16), nn.Tanh(), nn.Linear(16, n_act))
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        self.eps = eps

    def clipped_surrogate(self, s, a, old_logp, adv):
        ratio = torch.exp(Categorical(logits=self.net(s)).log_prob(a) - old_logp)
        return torch.min(ratio * adv, ratio.clamp(1 - self.eps, 1 + self.eps) * adv)

    def sga(self, surrogates):
        loss = -torch.stack(surrogates).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def run():
    torch.manual_seed(0)
    n_obs, n_act = 4, 2
    policy = PolicyNetwork(n_obs, n_act)
    V, Q = ValueFunction(n_obs), ValueFunction(n_obs + n_act)
    s = torch.randn(n_obs)
    surrogates = []
    for t in range(5):
        with torch.no_grad():
            dist = Categorical(logits=policy.net(s))
            a = dist.sample()
            old_logp = dist.log_prob(a)
        r = torch.randn(())
        s2 = s + 0.1 * torch.randn(n_obs)
        v = V(s)
        q = Q(torch.cat([s, nn.functional.one_hot(a, n_act).float()]))
        V.sgd(V.mse_loss(v, r + 0.99 * V(s2).detach()))
        Q.sgd(Q.mse_loss(q, r + 0.99 * V(s2).detach()))
        adv = q - v
        surrogates.append(policy.clipped_surrogate(s, a, old_logp, adv))
        s = s2
    policy.sga(surrogates)
    return {"policy": policy, "V": V, "Q": Q}
