"""TD3 twin critic: a copy-paste typo computes q2 with the q1 output layer, so q2_out never
receives gradient. The clipped double-Q target under no_grad is legitimate.
Thread: second Q network of TD3 never updated (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "unused_parameter"
QUERY = 'critic.q2_out.weight'
EXPECT = "grad_none"

class TwinCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.q1_body, self.q1_out = nn.Linear(4, 16), nn.Linear(16, 1)
        self.q2_body, self.q2_out = nn.Linear(4, 16), nn.Linear(16, 1)
    def forward(self, s, a):
        sa = torch.cat([s, a], -1)
        q1 = self.q1_out(torch.relu(self.q1_body(sa)))
        q2 = self.q1_out(torch.relu(self.q2_body(sa)))  # <-- CUT
        return q1, q2

def run():
    torch.manual_seed(0)
    critic, critic_t = TwinCritic(), TwinCritic()
    critic_t.load_state_dict(critic.state_dict())
    opt = torch.optim.Adam(critic.parameters(), 1e-3)
    s, a, r, s2 = torch.randn(8, 3), torch.rand(8, 1), torch.randn(8, 1), torch.randn(8, 3)
    with torch.no_grad():
        t1, t2 = critic_t(s2, torch.rand(8, 1))
        y = r + 0.99 * torch.min(t1, t2)
    q1, q2 = critic(s, a)
    loss = F.mse_loss(q1, y) + F.mse_loss(q2, y)
    opt.zero_grad(); loss.backward(); opt.step()
    return {"critic": critic}
