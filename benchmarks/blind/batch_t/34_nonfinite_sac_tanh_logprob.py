"""SAC tanh-squashed log-prob written without epsilon: log(1 - tanh(u)^2) hits log(0) when an
action saturates, giving nan gradients in the policy. The no_grad target critic is legitimate.
Thread: SAC nan in policy loss / log_prob of tanh Normal (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "nonfinite_gradient"
QUERY = 'policy.mu.weight'
EXPECT = "grad_nonfinite"

class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 16)
        self.mu = nn.Linear(16, 1)
        nn.init.constant_(self.mu.bias, 30.0)
    def forward(self, s):
        mu = self.mu(torch.relu(self.body(s)))
        a = torch.tanh(mu)
        logp = -0.5 * mu.pow(2) - torch.log(1 - a.pow(2))  # <-- CUT
        return a, logp

def run():
    torch.manual_seed(0)
    policy = Policy()
    q, q_t = nn.Linear(4, 1), nn.Linear(4, 1)
    q_t.load_state_dict(q.state_dict())
    s = torch.randn(8, 3)
    a, logp = policy(s)
    with torch.no_grad():
        baseline = q_t(torch.cat([s, torch.zeros(8, 1)], -1))
    loss = (0.2 * logp - q(torch.cat([s, a], -1)) + baseline).mean()
    loss.backward()
    return {"policy": policy}
