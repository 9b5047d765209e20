"""Actor-critic: the actor's output head is re-created for a new action space after the optimizer
was built; the optimizer still holds the old head weight, which gets no grad.
Thread: optimizer not updating after replacing layer (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "param_recreated"
QUERY = "opt.param_groups[0]['params'][-2]"
EXPECT = "grad_none"

class ActorCritic(nn.Module):
    def __init__(self, n_act=3):
        super().__init__()
        self.body = nn.Linear(6, 32)
        self.pi = nn.Linear(32, n_act)
        self.v = nn.Linear(32, 1)
    def forward(self, s):
        h = torch.tanh(self.body(s))
        return self.pi(h), self.v(h)

def run():
    torch.manual_seed(0)
    ac = ActorCritic()
    opt = torch.optim.Adam(list(ac.body.parameters()) + list(ac.pi.parameters()), 7e-4)
    v_opt = torch.optim.Adam(ac.v.parameters(), 1e-3)
    ac.pi = nn.Linear(32, 4)  # <-- CUT
    s, a, ret = torch.randn(8, 6), torch.randint(0, 4, (8,)), torch.randn(8)
    logits, v = ac(s)
    adv = (ret - v.squeeze(-1)).detach()
    logp = F.log_softmax(logits, -1).gather(1, a[:, None]).squeeze(1)
    loss = -(logp * adv).mean() + 0.5 * F.mse_loss(v.squeeze(-1), ret)
    opt.zero_grad(); v_opt.zero_grad(); loss.backward(); opt.step(); v_opt.step()
    return {"ac": ac, "opt": opt}
