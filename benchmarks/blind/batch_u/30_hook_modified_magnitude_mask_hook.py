"""pytorch/pytorch#10683 (Tensor.register_hook does not pass the tensor, the user wants
to manipulate a parameter's gradient with respect to its own values): a pruning script
closes over the weight in a hook that keeps only the gradients of "large" weights,
with the threshold taken from a config in percent (50) instead of a fraction. No
weight is that large, so the hook zeroes everything: model.fc1.weight.grad is all 0."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc1.weight"
EXPECT = "grad_zero"


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def attach_magnitude_mask(param, keep_above):
    def hook(grad):
        mask = (param.detach().abs() > keep_above).to(grad.dtype)
        return grad * mask  # <-- CUT
    return param.register_hook(hook)


def run():
    torch.manual_seed(0)
    cfg = {"prune_threshold": 50}
    model = MLP()
    handle = attach_magnitude_mask(model.fc1.weight, cfg["prune_threshold"])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(10, 8), torch.randint(0, 2, (10,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    handle.remove()
    return {"model": model, "loss": loss}
