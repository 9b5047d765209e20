"""Actor-critic: the sampled action index from `torch.multinomial(probs, 1)`
is used directly as a continuous value in the policy loss instead of its
log-probability. The critic trains; the policy network gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
    critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.Adam(list(policy.parameters()) + list(critic.parameters()), lr=1e-3)
    obs = torch.randn(8, 4)
    returns = torch.randn(8)
    probs = F.softmax(policy(obs), dim=-1)
    action = torch.multinomial(probs, 1).squeeze(1)  # <-- CUT
    value = critic(obs).squeeze(1)
    adv = (returns - value).detach()
    policy_loss = -(action.float() * adv).mean()
    value_loss = F.mse_loss(value, returns)
    opt.zero_grad()
    (policy_loss + 0.5 * value_loss).backward()
    opt.step()
    return {"policy": policy, "critic": critic}
