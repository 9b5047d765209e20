"""Actor picks an action bin with (actor(s) * n).long() to index a learned Q table; the Q table
trains but the actor gets no gradient. The target table is a no_grad clone (legitimate).
Thread: actor parameters have no grad after indexing (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "integer_cast"
QUERY = 'actor.fc.weight'
EXPECT = "grad_none"

class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
    def forward(self, s):
        return torch.sigmoid(self.fc(s))

def run():
    torch.manual_seed(0)
    actor = Actor()
    q_table = nn.Parameter(torch.randn(8, 10))
    with torch.no_grad():
        q_target = q_table.clone()
    s = torch.randn(8, 4)
    idx = (actor(s).squeeze(-1) * 9).long()  # <-- CUT
    q = q_table[torch.arange(8), idx]
    loss = -q.mean() + 0.1 * F.mse_loss(q, q_target[torch.arange(8), idx])
    loss.backward()
    return {"actor": actor, "q_table": q_table}
