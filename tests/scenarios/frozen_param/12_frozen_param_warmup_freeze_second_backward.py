"""Two losses, two backward calls per step. In step 1 a warmup rule freezes the aux
head; the unfreeze at step 2 targets `model.main` by mistake. In step 3 the main
backward works, but the aux loss has nothing that requires grad and its backward raises.
"""
import torch
import torch.nn as nn

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Linear(6, 2)
        self.aux = nn.Linear(6, 1)


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        if step == 0:
            model.aux.requires_grad_(False)  # <-- CUT
        if step == 2:
            model.main.requires_grad_(True)
        x = torch.randn(8, 6)
        y, y_aux = torch.randint(0, 2, (8,)), torch.randn(8, 1)
        opt.zero_grad()
        main_loss = nn.functional.cross_entropy(model.main(x), y)
        main_loss.backward()
        if step == 2:
            aux_loss = ((model.aux(x) - y_aux) ** 2).mean()
            aux_loss.backward()
        opt.step()
    return {"model": model}
