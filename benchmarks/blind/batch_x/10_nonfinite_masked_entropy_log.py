"""PPO with invalid-action masking: logits of illegal moves are filled with -inf, and
the entropy bonus is written as -(probs * log(probs)); the masked probs are exactly 0,
log(0) = -inf, and the policy gradient comes back NaN.
Thread: JuliaReinforcementLearning/ReinforcementLearning.jl#917; tensorflow/agents#562."""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.head.weight"
EXPECT = "grad_nonfinite"


class MaskedPolicy(nn.Module):
    def __init__(self, obs_dim=6, n_actions=5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU())
        self.head = nn.Linear(32, n_actions)

    def forward(self, obs, legal):
        logits = self.head(self.body(obs))
        return logits.masked_fill(~legal, float("-inf"))


def entropy_of(logits):
    probs = torch.softmax(logits, -1)
    log_probs = torch.log(probs)  # <-- CUT
    return -(probs * log_probs).sum(-1)


def run():
    torch.manual_seed(0)
    policy = MaskedPolicy()
    opt = torch.optim.Adam(policy.parameters(), lr=2.5e-4)
    obs = torch.randn(8, 6)
    legal = torch.ones(8, 5, dtype=torch.bool)
    legal[:, 3:] = False
    old_logp = torch.full((8,), -1.0)
    actions = torch.randint(0, 3, (8,))
    adv = torch.randn(8)
    logits = policy(obs, legal)
    logp = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
    ratio = (logp - old_logp).exp()
    pg = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
    loss = pg - 0.01 * entropy_of(logits).mean()
    opt.zero_grad()
    loss.backward()
    return {"policy": policy, "loss": loss}
