"""Control: no nn.Module at all. Two constant matrices are created with
requires_grad_(False) and a plain tensor made with .requires_grad_() is optimised
directly with SGD for a few iterations, with zero_grad() before each backward and
.requires_grad printed for logging. The tensor is a leaf and gets its gradient each step.
"""
import torch

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "tensor"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    cte1 = torch.rand(5, 3).requires_grad_(False)
    cte2 = torch.rand(5, 5).requires_grad_(False)
    tensor = torch.ones(3, 5).requires_grad_()
    optim = torch.optim.SGD([tensor], lr=1)
    log = []
    for i in range(3):
        optim.zero_grad()
        output = cte1 @ tensor + cte2
        log.append((i, output.requires_grad))
        loss = output.sum()  # <-- CUT
        loss.backward()
        optim.step()
    return {"tensor": tensor, "cte1": cte1, "cte2": cte2, "log": log}
