"""Control: the backbone is frozen for the first (warm-up) step and unfrozen before
step 2; the optimizer was built over all parameters, and on odd steps a no_grad validation
forward is logged. After step 2 the backbone weight has a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "backbone[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(5, 8), nn.ReLU())
    head = nn.Linear(8, 2)
    opt = torch.optim.SGD([*backbone.parameters(), *head.parameters()], lr=0.1)
    val = []
    for step in range(2):
        for p in backbone.parameters():
            p.requires_grad_(step >= 1)
        x, y = torch.randn(7, 5), torch.randint(0, 2, (7,))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(head(backbone(x)), y)  # <-- CUT
        loss.backward()
        opt.step()
        if step % 2 == 1:
            with torch.no_grad():
                val.append(head(backbone(x)).argmax(1).float().mean().item())
    return {"backbone": backbone, "head": head, "loss": loss, "val": val}
