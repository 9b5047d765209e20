"""A "re-init the classifier after the first step" flag (meant for warm-starting) runs
`model.fc = nn.Linear(...)` after the optimizer was built. Step 1 is fine; from step 2 the
optimizer's fc weight is stale and gets no gradient, while the new fc is never stepped.
"""
import torch
import torch.nn as nn

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][-2]"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 8)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(torch.relu(self.body(x)))


def run():
    torch.manual_seed(0)
    cfg = {"reinit_head_after_first_step": True}
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if step == 0 and cfg["reinit_head_after_first_step"]:
            model.fc = nn.Linear(8, 3)  # <-- CUT
    return {"model": model, "opt": opt, "loss": loss}
