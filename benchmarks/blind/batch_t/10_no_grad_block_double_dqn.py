"""Double DQN: the online Q(s,a) line was indented into the `with torch.no_grad()` block that
computes the (legitimate) target, so the loss does not require grad and backward raises.
Thread: element 0 of tensors does not require grad in DQN training (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "no_grad_block"
QUERY = None
EXPECT = "backward_error"

class DoubleDQN:
    def __init__(self):
        self.online = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
        self.target = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
        self.target.load_state_dict(self.online.state_dict())
        self.opt = torch.optim.Adam(self.online.parameters(), 1e-3)
        self.gamma = 0.99
    def compute_loss(self, s, a, r, s2, d):
        with torch.no_grad():
            a2 = self.online(s2).argmax(1, keepdim=True)
            q_next = self.target(s2).gather(1, a2).squeeze(1)
            y = r + self.gamma * (1 - d) * q_next
            q = self.online(s).gather(1, a.unsqueeze(1)).squeeze(1)  # <-- CUT
        return F.mse_loss(q, y)
    def step(self, batch):
        loss = self.compute_loss(*batch)
        self.opt.zero_grad(); loss.backward(); self.opt.step()

def run():
    torch.manual_seed(0)
    agent = DoubleDQN()
    batch = (torch.randn(8, 4), torch.randint(0, 2, (8,)), torch.randn(8), torch.randn(8, 4), torch.zeros(8))
    agent.step(batch)
    return {"agent": agent}
