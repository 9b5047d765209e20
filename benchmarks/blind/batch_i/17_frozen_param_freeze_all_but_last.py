"""Fine-tuning script that freezes "everything except the last layer" with
params = list(model.parameters()) and a loop over params[:-1]. The last layer has
a weight and a bias, so only the bias stays trainable and the new head's weight
is frozen as well: model.head.weight.grad is None.
Thread: SO "How to freeze selected layers of a model in Pytorch?" (recalled).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head.weight"
EXPECT = "grad_none"


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        return self.head(self.features(x))


def freeze_all_but_last(model):
    params = list(model.parameters())
    for p in params[:-1]:
        p.requires_grad = False  # <-- CUT
    return [p for p in params if p.requires_grad]


def run():
    torch.manual_seed(0)
    model = Classifier()
    trainable = freeze_all_but_last(model)
    opt = torch.optim.SGD(trainable, lr=0.01, momentum=0.9)
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, 5, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "trainable": trainable}
