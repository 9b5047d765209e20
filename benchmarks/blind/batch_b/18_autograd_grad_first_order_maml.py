"""First-order MAML following the suggestion in oscarknagg/few-shot#9 ("doing
autograd.grad over model.named_parameters() for each loss and summing it up"):
the summed task gradients are computed with torch.autograd.grad, but nothing
writes them into .grad before meta_optimiser.step(): model.fc1.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_none"


class FewShotNet(nn.Module):
    def __init__(self, k_way=3):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, k_way)

    def functional_forward(self, x, w):
        return F.linear(F.relu(F.linear(x, w["fc1.weight"], w["fc1.bias"])), w["fc2.weight"], w["fc2.bias"])


def meta_gradient_step(model, meta_optimiser, tasks, inner_lr=0.4, inner_steps=1):
    task_gradients = []
    for x_s, y_s, x_q, y_q in tasks:
        fast_weights = dict(model.named_parameters())
        for _ in range(inner_steps):
            loss = F.cross_entropy(model.functional_forward(x_s, fast_weights), y_s)
            grads = torch.autograd.grad(loss, fast_weights.values())
            fast_weights = {n: (w - inner_lr * g).detach().requires_grad_() for (n, w), g in zip(fast_weights.items(), grads)}
        q_loss = F.cross_entropy(model.functional_forward(x_q, fast_weights), y_q)
        q_grads = torch.autograd.grad(q_loss, list(fast_weights.values()))  # <-- CUT
        task_gradients.append(q_grads)
    sum_task_gradients = [torch.stack(gs).mean(0) for gs in zip(*task_gradients)]
    meta_optimiser.zero_grad()
    meta_optimiser.step()
    return q_loss, sum_task_gradients


def run():
    torch.manual_seed(0)
    model = FewShotNet()
    meta_optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    tasks = [(torch.randn(6, 8), torch.randint(0, 3, (6,)), torch.randn(6, 8), torch.randint(0, 3, (6,)))
             for _ in range(2)]
    q_loss, grads = meta_gradient_step(model, meta_optimiser, tasks)
    return {"model": model, "q_loss": q_loss, "grads": grads}
