"""DynamicNet-style model that samples how many times to apply middle_linear per forward.
The user set max_depth from a config that is 0 during a "warm-up" phase, and forward has a
shortcut `return self.output_linear(h)` when depth == 0, so middle_linear is skipped for
the whole warm-up and its .grad is None after the step.
Thread: discuss.pytorch.org/t/relationship-between-the-net-structure-and-forward/17826
"""
import torch
import torch.nn as nn

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.middle_linear.weight"
EXPECT = "grad_none"

CFG = {"warmup_steps": 100, "max_depth": 3}


class DynamicNet(nn.Module):
    def __init__(self, D_in, H, D_out):
        super().__init__()
        self.input_linear = nn.Linear(D_in, H)
        self.middle_linear = nn.Linear(H, H)
        self.output_linear = nn.Linear(H, D_out)
        self.max_depth = CFG["max_depth"]

    def forward(self, x):
        h = self.input_linear(x).clamp(min=0)
        depth = int(torch.randint(0, self.max_depth + 1, ()))
        if depth == 0:
            return self.output_linear(h)  # <-- CUT
        for _ in range(depth):
            h = self.middle_linear(h).clamp(min=0)
        return self.output_linear(h)


def train_step(model, opt, x, y, step):
    model.max_depth = 0 if step < CFG["warmup_steps"] else CFG["max_depth"]
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def run():
    torch.manual_seed(0)
    model = DynamicNet(8, 16, 2)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x, y = torch.randn(8, 8), torch.randn(8, 2)
    loss = train_step(model, opt, x, y, step=0)
    return {"model": model, "loss": loss}
