"""FGSM adversarial training for a surrogate model that runs in float64 (simulation
data). The perturbation is created as a float32 leaf with requires_grad=True and then
rebound with delta = delta.to(cfg["dtype"]). After backward, delta.grad is None; the
fallback to zeros makes the "adversarial" batch equal to the clean one.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "delta"
EXPECT = "grad_none"


class Surrogate(nn.Module):
    def __init__(self, d_in=10, n_cls=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, n_cls))

    def forward(self, x):
        return self.net(x)


def fgsm_perturb(model, x, y, cfg):
    delta = torch.zeros_like(x, dtype=torch.float32, requires_grad=True)
    delta = delta.to(cfg["dtype"])  # <-- CUT
    loss = F.cross_entropy(model(x + delta), y)
    loss.backward()
    g = delta.grad if delta.grad is not None else torch.zeros_like(x)
    return (x + cfg["eps"] * g.sign()).detach(), delta


def run():
    torch.manual_seed(0)
    cfg = {"dtype": torch.float64, "eps": 0.03, "lr": 1e-3}
    model = Surrogate().to(cfg["dtype"])
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    x = torch.randn(16, 10, dtype=cfg["dtype"])
    y = torch.randint(0, 3, (16,))
    x_adv, delta = fgsm_perturb(model, x, y, cfg)
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y) + F.cross_entropy(model(x_adv), y)
    loss.backward()
    opt.step()
    return {"model": model, "delta": delta, "x_adv": x_adv, "loss": loss}
