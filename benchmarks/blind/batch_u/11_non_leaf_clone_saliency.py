"""Saliency for an input batch (the case pytorch/pytorch#30531 added the non-leaf .grad
warning for: "dummy = dummy.clone(); dummy.grad"): the image leaf is created with
requires_grad, then the explainer normalizes it with (img - mean) / std and keeps
the normalized tensor as `img_n`, reading img_n.grad after backward. img_n is a
non-leaf, so its .grad is None (img.grad is populated)."""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "explainer.img_n"
EXPECT = "grad_none"


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.fc = nn.Linear(24, 5)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


class VanillaGradExplainer:
    def __init__(self, model):
        self.model = model.eval()
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
        self.std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)

    def explain(self, raw, cls):
        self.img = raw.clone().requires_grad_(True)
        self.img_n = (self.img - self.mean) / self.std  # <-- CUT
        score = self.model(self.img_n)[torch.arange(raw.shape[0]), cls].sum()
        self.model.zero_grad()
        score.backward()
        return self.img_n.grad


def run():
    torch.manual_seed(0)
    model = SmallCNN()
    explainer = VanillaGradExplainer(model)
    raw = torch.rand(2, 3, 8, 8)
    sal = explainer.explain(raw, torch.tensor([1, 3]))
    return {"explainer": explainer, "sal": sal}
