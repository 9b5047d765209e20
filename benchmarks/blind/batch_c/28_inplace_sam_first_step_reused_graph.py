"""Active-learning loop trained with a SAM optimizer. After the first backward,
first_step() perturbs every weight in place (p.add_(e_w)); the second forward is
computed but its loss is not assigned, so loss.backward() runs again on the first graph,
whose saved weights were modified: backward raises (AsStrided ... is at version 2).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = torch.norm(torch.stack([p.grad.norm(p=2) for g in self.param_groups
                                            for p in g["params"] if p.grad is not None]), p=2)
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale.to(p)
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if "e_w" in self.state[p]:
                    p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


class Backbone(nn.Module):
    def __init__(self, n_cls=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(32, 16), nn.ReLU())
        self.linear = nn.Linear(16, n_cls)

    def forward(self, x):
        f = self.features(x)
        return self.linear(f), f, [f]


def train_epoch(models, criterion, optimizers, batches):
    models.train()
    for inputs, labels in batches:
        optimizers.zero_grad()
        scores, _, features = models(inputs)
        target_loss = criterion(scores, labels)
        loss = torch.sum(target_loss) / target_loss.size(0)
        loss.backward(retain_graph=True)
        optimizers.first_step(zero_grad=True)  # <-- CUT
        criterion(models(inputs)[0], labels)
        loss.backward(retain_graph=True)
        optimizers.second_step(zero_grad=True)
    return loss


def run():
    torch.manual_seed(0)
    model = Backbone()
    criterion = nn.CrossEntropyLoss(reduction="none")
    optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)
    batches = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,)))]
    loss = train_epoch(model, criterion, optimizer, batches)
    return {"model": model, "optimizer": optimizer, "loss": loss}
