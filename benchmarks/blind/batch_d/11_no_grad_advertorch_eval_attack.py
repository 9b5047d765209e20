"""Robustness evaluation: the whole test loop is wrapped in
`with torch.no_grad():` as usual for evaluation, but it calls the gradient-based
attack `adversary.perturb(inputs, targets)`. The attack's own loss is computed
under no_grad, so its internal loss.backward() raises (BorealisAI/advertorch#79).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def perturb_iterative(xvar, yvar, predict, nb_iter, eps, eps_iter, loss_fn):
    delta = torch.zeros_like(xvar)
    delta.requires_grad_()
    for ii in range(nb_iter):
        outputs = predict(xvar + delta)
        loss = loss_fn(outputs, yvar)
        loss.backward()
        grad_sign = delta.grad.detach().sign()
        delta.data = (delta.data + eps_iter * grad_sign).clamp(-eps, eps)
        delta.grad.data.zero_()
    return (xvar + delta).clamp(0.0, 1.0)


class LinfPGDAttack:
    def __init__(self, predict, eps=0.03, nb_iter=3, eps_iter=0.01):
        self.predict, self.eps, self.nb_iter, self.eps_iter = predict, eps, nb_iter, eps_iter
        self.loss_fn = nn.CrossEntropyLoss(reduction="sum")

    def perturb(self, x, y):
        return perturb_iterative(x, y, self.predict, self.nb_iter, self.eps, self.eps_iter, self.loss_fn)


def test(net, adversary, testloader):
    net.eval()
    correct = 0
    with torch.no_grad():
        for batch_idx, (inputs, targets) in enumerate(testloader):
            adv_untargeted = adversary.perturb(inputs, targets)  # <-- CUT
            outputs = net(adv_untargeted)
            correct += (outputs.argmax(1) == targets).sum().item()
    return correct


def run():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 8 * 8, 10))
    adversary = LinfPGDAttack(net)
    testloader = [(torch.rand(4, 1, 8, 8), torch.randint(0, 10, (4,)))]
    correct = test(net, adversary, testloader)
    return {"net": net, "correct": correct}
