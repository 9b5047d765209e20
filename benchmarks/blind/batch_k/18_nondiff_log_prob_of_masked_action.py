"""Policy-gradient agent with invalid-action masking: illegal logits are filled with -inf.
The replay batch contains an action that became illegal, so its probability is exactly 0 and
torch.log of it is -inf; its backward is inf and anomaly mode raises at SoftmaxBackward0 (NaN).
"""
import torch
import torch.nn as nn

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class MaskedPolicy(nn.Module):
    def __init__(self, obs_dim=10, n_act=5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, n_act))

    def forward(self, s, legal):
        logits = self.body(s).masked_fill(~legal, float("-inf"))
        return torch.softmax(logits, dim=-1)


class PGLearner:
    def __init__(self, entropy_coef=0.0):
        self.policy = MaskedPolicy()
        self.opt = torch.optim.RMSprop(self.policy.parameters(), lr=7e-4)
        self.entropy_coef = entropy_coef

    def loss(self, s, legal, actions, adv):
        probs = self.policy(s, legal)
        logp = torch.log(probs.gather(1, actions.unsqueeze(1)).squeeze(1))  # <-- CUT
        return -(logp * adv).mean()

    def update(self, batch):
        with torch.autograd.detect_anomaly():
            loss = self.loss(*batch)
            self.opt.zero_grad()
            loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    learner = PGLearner()
    s = torch.randn(8, 10)
    legal = torch.ones(8, 5, dtype=torch.bool)
    legal[3, 2] = False
    actions = torch.tensor([0, 1, 4, 2, 3, 0, 1, 2])
    adv = torch.randn(8)
    loss = learner.update((s, legal, actions, adv))
    return {"learner": learner, "loss": loss}
