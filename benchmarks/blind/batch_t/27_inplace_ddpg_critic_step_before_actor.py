"""DDPG: critic_opt.step() runs before actor_loss.backward(), while actor_loss was computed from
the critic's forward; the in-place weight update breaks backward. The no_grad target is legitimate.
Thread: one of the variables needed for gradient computation has been modified by an inplace operation (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "inplace_saved_tensor"
QUERY = None
EXPECT = "backward_error"

def run():
    torch.manual_seed(0)
    actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
    critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    critic_t = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    critic_t.load_state_dict(critic.state_dict())
    a_opt, c_opt = torch.optim.Adam(actor.parameters(), 1e-3), torch.optim.Adam(critic.parameters(), 1e-3)
    s, a, r, s2 = torch.randn(8, 3), torch.rand(8, 1), torch.randn(8, 1), torch.randn(8, 3)
    with torch.no_grad():
        y = r + 0.99 * critic_t(torch.cat([s2, actor(s2)], -1))
    c_loss = F.mse_loss(critic(torch.cat([s, a], -1)), y)
    actor_loss = -critic(torch.cat([s, actor(s)], -1)).mean()
    c_opt.zero_grad(); c_loss.backward()
    c_opt.step()  # <-- CUT
    a_opt.zero_grad(); actor_loss.backward(); a_opt.step()
    return {"actor": actor}
