"""PPO Gaussian policy: the state-independent log_std leaf is rebound with .double() to match a
float64 env, so the name now holds a non-leaf; self.log_std.grad stays None.
Thread: PPO log_std not learning after dtype change (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "leaf_replaced_by_to"
QUERY = 'policy.log_std'
EXPECT = "grad_none"

class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(4, 2).double()
        self.log_std = torch.zeros(2, requires_grad=True)
        self.log_std = self.log_std.double()  # <-- CUT
    def log_prob(self, s, a):
        mu = self.mu(s)
        return (-0.5 * ((a - mu) / self.log_std.exp()) ** 2 - self.log_std).sum(-1)

def run():
    torch.manual_seed(0)
    policy = Policy()
    old = Policy()
    old.load_state_dict(policy.state_dict())
    s = torch.randn(16, 4, dtype=torch.float64)
    a = torch.randn(16, 2, dtype=torch.float64)
    adv = torch.randn(16, dtype=torch.float64)
    with torch.no_grad():
        old_lp = old.log_prob(s, a)
    ratio = (policy.log_prob(s, a) - old_lp).exp()
    loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
    loss.backward()
    return {"policy": policy}
