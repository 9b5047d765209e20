"""MAML in a LightningModule with manual optimization: the inner loop uses torch.autograd.grad
with create_graph=True (correct), but the outer update also calls torch.autograd.grad on the
query loss instead of manual_backward, so the meta-parameters' .grad stays None at opt.step().
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "grad_none"


class MetaLearner(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 1))
        self.automatic_optimization = False
        self.inner_lr = 0.01
        self.opt = torch.optim.Adam(self.parameters(), lr=1e-3)

    def functional_forward(self, x, params):
        h = F.relu(F.linear(x, params[0], params[1]))
        return F.linear(h, params[2], params[3])

    def training_step(self, tasks):
        params = list(self.net.parameters())
        outer_loss = 0.0
        for xs, ys, xq, yq in tasks:
            support_loss = F.mse_loss(self.functional_forward(xs, params), ys)
            grads = torch.autograd.grad(support_loss, params, create_graph=True)
            fast = [p - self.inner_lr * g for p, g in zip(params, grads)]
            outer_loss = outer_loss + F.mse_loss(self.functional_forward(xq, fast), yq)
        outer_loss = outer_loss / len(tasks)
        self.opt.zero_grad()
        meta_grads = torch.autograd.grad(outer_loss, params)  # <-- CUT
        self.logged_grad_norm = torch.stack([g.norm() for g in meta_grads]).norm()
        self.opt.step()
        return outer_loss


def run():
    torch.manual_seed(0)
    model = MetaLearner()
    tasks = []
    for _ in range(3):
        a, ph = torch.rand(1) * 4 + 1, torch.rand(1) * 3
        xs, xq = torch.rand(5, 1) * 10 - 5, torch.rand(5, 1) * 10 - 5
        tasks.append((xs, a * torch.sin(xs + ph), xq, a * torch.sin(xq + ph)))
    loss = model.training_step(tasks)
    return {"model": model, "loss": loss}
