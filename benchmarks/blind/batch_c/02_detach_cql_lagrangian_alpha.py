"""Discrete CQL learner with a Lagrangian alpha' (RLlib-style). The Lagrangian term is
written as -cql_alpha.detach() * (constraint.detach() - thresh), so both factors are
cut: the loss still trains the Q-network, but the log alpha' parameter that this term
is supposed to update never gets a gradient (learner.log_cql_alpha.grad is None).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "learner.log_cql_alpha"
EXPECT = "grad_none"


class QNet(nn.Module):
    def __init__(self, obs_dim=6, n_actions=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, n_actions))

    def forward(self, obs):
        return self.body(obs)


class CQLLearner(nn.Module):
    def __init__(self, gamma=0.99, lagrangian_thresh=5.0, min_q_weight=5.0):
        super().__init__()
        self.q = QNet()
        self.q_target = QNet()
        self.q_target.load_state_dict(self.q.state_dict())
        self.log_cql_alpha = nn.Parameter(torch.zeros(1))
        self.gamma = gamma
        self.lagrangian_thresh = lagrangian_thresh
        self.min_q_weight = min_q_weight

    def compute_loss(self, batch):
        obs, act, rew, next_obs, done = batch
        q_all = self.q(obs)
        q_selected = q_all.gather(1, act.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_q = self.q_target(next_obs).max(dim=1).values
            target = rew + self.gamma * (1.0 - done) * next_q
        td_loss = F.mse_loss(q_selected, target)

        logsumexp_q = torch.logsumexp(q_all, dim=1).mean()
        cql_constraint = logsumexp_q - q_selected.mean()
        cql_alpha = torch.clamp(torch.exp(self.log_cql_alpha), min=0.0, max=1e6)
        critic_loss = td_loss + cql_alpha.detach() * self.min_q_weight * cql_constraint
        # Lagrangian loss for alpha' (maximised w.r.t. alpha'), negated for the optimizer.
        lagrangian_loss = -cql_alpha.detach() * (cql_constraint.detach() - self.lagrangian_thresh)  # <-- CUT
        return {"critic_loss": critic_loss, "lagrangian_loss": lagrangian_loss.squeeze()}


def run():
    torch.manual_seed(0)
    learner = CQLLearner()
    optim = torch.optim.Adam([
        {"params": learner.q.parameters(), "lr": 3e-4},
        {"params": [learner.log_cql_alpha], "lr": 1e-3},
    ])
    batch = (torch.randn(32, 6), torch.randint(0, 4, (32,)), torch.randn(32),
             torch.randn(32, 6), (torch.rand(32) < 0.05).float())
    losses = learner.compute_loss(batch)
    total = sum(losses.values())
    optim.zero_grad()
    total.backward()
    optim.step()
    return {"learner": learner, "optim": optim, "losses": losses, "total": total}
