"""Sharpness-aware minimization (SAM optimizer) in a multi-task chest X-ray classifier. The second
forward's task losses are added onto `loss`, which still holds the first pass's graph (it was never
reset to 0), so the second loss.backward() walks into the already-freed first graph and raises
"Trying to backward through the graph a second time".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
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
        grad_norm = torch.norm(torch.stack([p.grad.norm(2) for g in self.param_groups
                                            for p in g["params"] if p.grad is not None]), 2)
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
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


class Classifier(nn.Module):
    def __init__(self, num_tasks=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.heads = nn.ModuleList([nn.Linear(32, 1) for _ in range(num_tasks)])

    def forward(self, x):
        f = self.backbone(x)
        logit_map = f.view(-1, 8, 2, 2)
        return [h(f) for h in self.heads], logit_map


def get_loss(output, target, t):
    loss_t = F.binary_cross_entropy_with_logits(output[t].squeeze(1), target[:, t])
    acc_t = ((output[t].squeeze(1) > 0).float() == target[:, t]).float().mean()
    return loss_t, acc_t


def run():
    torch.manual_seed(0)
    num_tasks = 3
    model = Classifier(num_tasks)
    optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)
    image = torch.randn(4, 1, 16, 16)
    target = (torch.rand(4, num_tasks) > 0.5).float()
    loss_sum, acc_sum = [0.0] * num_tasks, [0.0] * num_tasks

    output, logit_map = model(image)
    loss = 0
    for t in range(num_tasks):
        loss_t, acc_t = get_loss(output, target, t)
        loss += loss_t
        loss_sum[t] += loss_t.item()
        acc_sum[t] += acc_t.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.first_step(zero_grad=True)

    output, logit_map = model(image)
    for t in range(num_tasks):
        loss_t, acc_t = get_loss(output, target, t)
        loss += loss_t  # <-- CUT
        loss_sum[t] += loss_t.item()
        acc_sum[t] += acc_t.item()
    loss.backward()
    optimizer.second_step(zero_grad=True)
    return {"model": model, "optimizer": optimizer, "loss": loss}
