"""advertorch FGSM (BorealisAI/advertorch#49): the user wants the gradient of the
adversarial example returned by the attack, runs the model on it, calls backward
and reads fgsm_tensor.grad: None. xadv is computed from the input inside the attack,
so it is a non-leaf ("fgsm_tensor.is_leaf is False").
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "fgsm_tensor"
EXPECT = "grad_none"


class GradientSignAttack:
    def __init__(self, predict, eps=0.3, clip_min=0.0, clip_max=1.0):
        self.predict, self.eps = predict, eps
        self.clip_min, self.clip_max = clip_min, clip_max

    def perturb(self, x, y):
        xadv = x.clone().requires_grad_()
        loss = F.cross_entropy(self.predict(xadv), y)
        self.predict.zero_grad()
        loss.backward()
        grad_sign = xadv.grad.detach().sign()
        xadv = xadv + self.eps * grad_sign
        xadv = torch.clamp(xadv, self.clip_min, self.clip_max)  # <-- CUT
        return xadv


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
    adversary = GradientSignAttack(model, eps=0.1)
    cln_data = torch.rand(4, 1, 4, 4)
    true_label = torch.randint(0, 10, (4,))
    fgsm_tensor = adversary.perturb(cln_data, true_label)
    loss = F.cross_entropy(model(fgsm_tensor), true_label)
    loss.backward()
    return {"model": model, "fgsm_tensor": fgsm_tensor, "loss": loss}
