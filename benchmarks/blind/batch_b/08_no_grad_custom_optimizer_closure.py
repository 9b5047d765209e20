"""Lightning with a third-party optimizer (Lightning-AI/pytorch-lightning#18222):
the optimizer's step() is decorated with @torch.no_grad() and calls the closure
without re-enabling grad, so training_step runs in no-grad mode and backward
raises "element 0 of tensors does not require grad" (workaround: set_grad_enabled(True)).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Lion(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99)):
        super().__init__(params, dict(lr=lr, betas=betas))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()  # <-- CUT
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "exp_avg" not in state:
                    state["exp_avg"] = torch.zeros_like(p)
                b1, b2 = group["betas"]
                update = (state["exp_avg"] * b1 + p.grad * (1 - b1)).sign()
                p.add_(update, alpha=-group["lr"])
                state["exp_avg"].mul_(b2).add_(p.grad, alpha=1 - b2)
        return loss


class LitModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))

    def training_step(self, batch):
        x, y = batch
        return F.cross_entropy(self.net(x), y)


def fit_one_batch(module, optimizer, batch):
    def closure():
        loss = module.training_step(batch)
        optimizer.zero_grad()
        loss.backward()
        return loss
    return optimizer.step(closure=closure)


def run():
    torch.manual_seed(0)
    module = LitModel()
    optimizer = Lion(module.parameters())
    batch = (torch.randn(8, 8), torch.randint(0, 2, (8,)))
    loss = fit_one_batch(module, optimizer, batch)
    return {"module": module, "loss": loss}
