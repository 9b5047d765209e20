"""Snapshot ensemble with a running SWA copy: two members are trained jointly on
the averaged logits while swa_model is updated under no_grad (a legitimate cut).
Member 0's logits are detached "to save memory" before averaging, so member 0
gets no gradient at all."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "members[0].fc1.weight"
EXPECT = "grad_none"


class Member(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Ensemble(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x):
        outs = []
        for i, m in enumerate(self.members):
            o = m(x)
            if i == 0:
                o = o.detach()  # <-- CUT
            outs.append(o)
        return torch.stack(outs).mean(0)


def run():
    torch.manual_seed(0)
    members = [Member(), Member()]
    ens = Ensemble(members)
    swa_model = Member()
    swa_model.load_state_dict(members[1].state_dict())
    opt = torch.optim.SGD(ens.parameters(), lr=0.05)
    x, y = torch.randn(16, 6), torch.randint(0, 4, (16,))
    loss = F.cross_entropy(ens(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        n = 1
        for ps, pm in zip(swa_model.parameters(), members[1].parameters()):
            ps.mul_(n / (n + 1)).add_(pm / (n + 1))
    return {"members": members, "ens": ens, "swa_model": swa_model, "loss": loss}
