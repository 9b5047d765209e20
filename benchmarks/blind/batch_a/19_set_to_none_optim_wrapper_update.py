"""mmengine-style train_step (open-mmlab/mmdetection#11234): the user prints
parms.grad after optim_wrapper.update_params(losses) to check the update, and
it is None. update_params() does backward, step and then zero_grad(), which sets
grads to None before the user's check reads them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.backbone[0].weight"
EXPECT = "grad_none"


class OptimWrapper:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def update_params(self, loss):
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()  # <-- CUT


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.head = nn.Linear(32, 5)

    def train_step(self, data, optim_wrapper):
        img, labels = data
        logits = self.head(self.backbone(img).flatten(1))
        parsed_losses = F.cross_entropy(logits, labels)
        optim_wrapper.update_params(parsed_losses)
        grad_log = {}
        for name, parms in self.named_parameters():
            grad_log[name] = parms.grad  # '-->grad_value:' is None here
            break
        return parsed_losses, grad_log


def run():
    torch.manual_seed(0)
    model = Detector()
    optim_wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9))
    data = (torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,)))
    loss, grad_log = model.train_step(data, optim_wrapper)
    return {"model": model, "loss": loss, "grad_log": grad_log}
