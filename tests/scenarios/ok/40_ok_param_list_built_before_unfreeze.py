"""Control: the optimizer's param list is built as [p for p in model.parameters()
if p.requires_grad] while the backbone is frozen, then the backbone is unfrozen.
Backbone weights do not move (not in the optimizer) but backward does give them a
nonzero .grad - the gradient itself is fine.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    for p in model[0].parameters():
        p.requires_grad = False
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=1e-3)
    for p in model[0].parameters():
        p.requires_grad = True
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(x), y)  # <-- CUT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
