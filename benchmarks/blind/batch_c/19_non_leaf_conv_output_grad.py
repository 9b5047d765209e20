"""Feature-map gradient visualisation: the helper takes the stem's conv output
(requires_grad=True) and, after backpropagating the class score, reads feat.grad to
weight the activations. The image, a leaf, gets its grad, but feat is an intermediate
(non-leaf) tensor without retain_grad(), so feat.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "feat"
EXPECT = "grad_none"


class SmallCNN(nn.Module):
    def __init__(self, n_cls=5):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3)
        self.body = nn.Sequential(nn.ReLU(), nn.Conv2d(4, 8, 3), nn.ReLU())
        self.fc = nn.Linear(8, n_cls)

    def forward_from_stem(self, feat):
        return self.fc(self.body(feat).mean(dim=(2, 3)))


def feature_importance(model, img, target_cls):
    feat = model.stem(img)  # <-- CUT
    logits = model.forward_from_stem(feat)
    score = logits[:, target_cls].sum()
    model.zero_grad()
    score.backward()
    importance = None if feat.grad is None else (feat.grad * feat).sum(dim=1)
    return feat, logits, importance


def run():
    torch.manual_seed(0)
    model = SmallCNN().eval()
    img = torch.rand(8, 1, 9, 9, requires_grad=True)
    feat, logits, importance = feature_importance(model, img, target_cls=2)
    return {"model": model, "img": img, "feat": feat, "logits": logits, "importance": importance}
