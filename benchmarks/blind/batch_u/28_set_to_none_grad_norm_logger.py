"""After set_to_none=True became the zero_grad() default (pytorch/pytorch#92656): a
trainer does backward, step, then zero_grad() at the end of the iteration, and a
grad-norm logger that runs afterwards used to read zero tensors. It now reads None
for every parameter (the step itself was fine): model[0].weight.grad is None."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_none"


class GradNormLogger:
    def __init__(self):
        self.rows = []

    def __call__(self, model):
        norms = {n: (p.grad.norm().item() if p.grad is not None else None) for n, p in model.named_parameters()}
        self.rows.append(norms)


def train_iteration(model, opt, batch, logger):
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()  # <-- CUT
    logger(model)
    return loss


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    logger = GradNormLogger()
    batch = (torch.randn(8, 6), torch.randint(0, 3, (8,)))
    loss = train_iteration(model, opt, batch, logger)
    return {"model": model, "logger": logger, "loss": loss}
