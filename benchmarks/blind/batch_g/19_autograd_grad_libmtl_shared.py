"""Multi-task trainer with a hard-shared encoder and a custom loss-weighting
method: the weighting computes the shared-parameter gradients with
torch.autograd.grad (to measure per-task gradient norms) and then steps the
optimizer. autograd.grad returns the grads instead of storing them in .grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.model.encoder[0].weight"
EXPECT = "grad_none"


class HPSModel(nn.Module):
    def __init__(self, tasks, d_in=10, d_rep=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, d_rep), nn.ReLU(), nn.Linear(d_rep, d_rep), nn.ReLU())
        self.decoders = nn.ModuleDict({t: nn.Linear(d_rep, n_out) for t, n_out in tasks.items()})

    def forward(self, x):
        rep = self.encoder(x)
        return {t: dec(rep) for t, dec in self.decoders.items()}

    def get_share_params(self):
        return self.encoder.parameters()


class GradNormLikeWeighting:
    def __init__(self, model, task_num, alpha=1.5):
        self.model = model
        self.task_num = task_num
        self.alpha = alpha
        self.loss_scale = torch.ones(task_num)

    def backward(self, losses):
        weighted = (self.loss_scale * losses).sum()
        share = list(self.model.get_share_params())
        grads = torch.autograd.grad(weighted, share, retain_graph=True)  # <-- CUT
        norms = torch.stack([g.norm() for g in grads])
        self.loss_scale = self.task_num * F.softmax(-norms.mean() * torch.ones(self.task_num), -1)
        return self.loss_scale.detach()


class Trainer:
    def __init__(self, tasks, lr=1e-3):
        self.tasks = tasks
        self.model = HPSModel(tasks)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.weighting = GradNormLikeWeighting(self.model, len(tasks))

    def train_step(self, x, targets):
        self.optimizer.zero_grad(set_to_none=True)
        preds = self.model(x)
        losses = torch.stack([
            F.cross_entropy(preds["segment"], targets["segment"]),
            F.mse_loss(preds["depth"], targets["depth"]),
        ])
        w = self.weighting.backward(losses)
        self.optimizer.step()
        return losses.detach(), w


def run():
    torch.manual_seed(0)
    trainer = Trainer({"segment": 4, "depth": 1})
    x = torch.randn(8, 10)
    targets = {"segment": torch.randint(0, 4, (8,)), "depth": torch.randn(8, 1)}
    losses, w = trainer.train_step(x, targets)
    return {"trainer": trainer, "losses": losses, "w": w}
