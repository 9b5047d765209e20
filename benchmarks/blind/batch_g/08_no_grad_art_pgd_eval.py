"""Robustness evaluation loop: the test function is wrapped in
`with torch.no_grad():` for speed, and each batch is attacked with a hand-rolled
PGD (a classifier wrapper with a loss_gradient method, ART-style). The model
forward inside the attack is recorded without grad, so backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "None"
EXPECT = "backward_error"


class PyTorchClassifier:
    def __init__(self, model, loss, clip_values=(0.0, 1.0)):
        self.model = model
        self.loss = loss
        self.clip_values = clip_values

    def loss_gradient(self, x, y):
        x = x.clone().requires_grad_(True)
        logits = self.model(x)  # <-- CUT
        loss = self.loss(logits, y)
        self.model.zero_grad()
        loss.backward()
        return x.grad


class ProjectedGradientDescent:
    def __init__(self, estimator, eps=8 / 255, eps_step=2 / 255, max_iter=3):
        self.estimator = estimator
        self.eps, self.eps_step, self.max_iter = eps, eps_step, max_iter

    def generate(self, x, y):
        x_adv = x.clone()
        for _ in range(self.max_iter):
            grad = self.estimator.loss_gradient(x_adv, y)
            x_adv = x_adv + self.eps_step * grad.sign()
            x_adv = torch.min(torch.max(x_adv, x - self.eps), x + self.eps)
            x_adv = x_adv.clamp(*self.estimator.clip_values)
        return x_adv


def make_net():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(16, 10),
    )


def test(net, attack, loader):
    net.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for inputs, targets in loader:
            adv = attack.generate(inputs, targets)
            outputs = net(adv)
            correct += (outputs.argmax(1) == targets).sum().item()
            total += targets.numel()
    return correct / total


def run():
    torch.manual_seed(0)
    net = make_net()
    classifier = PyTorchClassifier(net, nn.CrossEntropyLoss())
    attack = ProjectedGradientDescent(classifier)
    loader = [(torch.rand(4, 3, 16, 16), torch.tensor([1, 2, 3, 4]))]
    acc = test(net, attack, loader)
    return {"net": net, "acc": acc}
