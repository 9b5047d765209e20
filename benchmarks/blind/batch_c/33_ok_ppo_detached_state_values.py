"""Control. PPO update (PPO-PyTorch style) with advantages = rewards -
state_values.detach(). The user thinks the critic never changes because of the detach,
but the same loss has the 0.5 * MSE(state_values, rewards) value term, so the critic's
weights get a normal gradient.
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.critic[0].weight"
EXPECT = "grad_ok"


class ActorCritic(nn.Module):
    def __init__(self, state_dim=4, action_dim=2, n_latent=32):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(state_dim, n_latent), nn.Tanh(),
                                   nn.Linear(n_latent, action_dim), nn.Softmax(dim=-1))
        self.critic = nn.Sequential(nn.Linear(state_dim, n_latent), nn.Tanh(), nn.Linear(n_latent, 1))

    def act(self, state):
        dist = Categorical(self.actor(state))
        action = dist.sample()
        return action, dist.log_prob(action)

    def evaluate(self, state, action):
        dist = Categorical(self.actor(state))
        return dist.log_prob(action), torch.squeeze(self.critic(state)), dist.entropy()


def run():
    torch.manual_seed(0)
    gamma, eps_clip = 0.99, 0.2
    policy, policy_old = ActorCritic(), ActorCritic()
    policy_old.load_state_dict(policy.state_dict())
    optimizer = torch.optim.Adam(policy.parameters(), lr=2e-3, betas=(0.9, 0.999))
    mse = nn.MSELoss()

    states, actions, logprobs, rewards, dones = [], [], [], [], []
    with torch.no_grad():
        for t in range(16):
            s = torch.randn(4)
            a, lp = policy_old.act(s)
            states.append(s); actions.append(a); logprobs.append(lp)
            rewards.append(float(torch.rand(()) > 0.5)); dones.append(t % 8 == 7)
    returns, discounted = [], 0.0
    for r, d in zip(reversed(rewards), reversed(dones)):
        discounted = 0.0 if d else discounted
        discounted = r + gamma * discounted
        returns.insert(0, discounted)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-5)
    old_states, old_actions = torch.stack(states), torch.stack(actions)
    old_logprobs = torch.stack(logprobs)

    logprobs_new, state_values, dist_entropy = policy.evaluate(old_states, old_actions)
    ratios = torch.exp(logprobs_new - old_logprobs.detach())
    advantages = returns - state_values.detach()
    surr1 = ratios * advantages
    surr2 = torch.clamp(ratios, 1 - eps_clip, 1 + eps_clip) * advantages
    loss = -torch.min(surr1, surr2) + 0.5 * mse(state_values, returns) - 0.01 * dist_entropy  # <-- CUT
    optimizer.zero_grad()
    loss.mean().backward()
    optimizer.step()
    policy_old.load_state_dict(policy.state_dict())
    return {"policy": policy, "policy_old": policy_old, "optimizer": optimizer, "loss": loss}
