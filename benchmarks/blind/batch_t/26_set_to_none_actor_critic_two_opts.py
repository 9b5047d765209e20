"""A2C with separate actor and critic optimizers: the combined loss is backpropagated once, then
actor_opt.zero_grad() is called between critic_opt.step() and actor_opt.step(), wiping the actor grads.
Thread: actor not learning with two optimizers (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "set_to_none_timing"
QUERY = 'actor[0].weight'
EXPECT = "grad_none"

def run():
    torch.manual_seed(0)
    actor = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
    critic = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))
    actor_opt = torch.optim.Adam(actor.parameters(), 7e-4)
    critic_opt = torch.optim.Adam(critic.parameters(), 1e-3)
    s, a, ret = torch.randn(16, 4), torch.randint(0, 2, (16,)), torch.randn(16)
    v = critic(s).squeeze(-1)
    adv = (ret - v).detach()
    logp = F.log_softmax(actor(s), -1).gather(1, a[:, None]).squeeze(1)
    loss = -(logp * adv).mean() + 0.5 * (ret - v).pow(2).mean()
    critic_opt.zero_grad()
    loss.backward()
    critic_opt.step()
    actor_opt.zero_grad()  # <-- CUT
    torch.nn.utils.clip_grad_norm_(actor.parameters(), 0.5)
    actor_opt.step()
    return {"actor": actor, "critic": critic}
