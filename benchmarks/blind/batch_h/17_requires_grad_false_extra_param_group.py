"""Discriminative learning rates via optimizer param groups. The user adds a learnable
input "prompt" as its own group, created with torch.randn((3, 8, 8)) and no requires_grad
(the forum thread shows such a tensor is silently accepted and ignored). The prompt is
added to every image, but its .grad stays None and it never changes.
Thread: discuss.pytorch.org/t/how-optimizer-recognize-the-parameters-while-setting-...-layers/65128
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "prompt"
EXPECT = "grad_none"


class SmallCNN(nn.Module):
    def __init__(self, n_cls=5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(8, n_cls)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def build_optimizer(model, prompt):
    large_lr = list(model.features.parameters())
    small_lr = list(model.classifier.parameters())
    return torch.optim.SGD([{"params": large_lr, "lr": 0.1},
                            {"params": small_lr},
                            {"params": [prompt], "lr": 1.0}], lr=0.01, momentum=0.85)


def run():
    torch.manual_seed(0)
    model = SmallCNN()
    prompt = torch.randn((3, 8, 8)) * 0.01  # <-- CUT
    opt = build_optimizer(model, prompt)
    x = torch.rand(4, 3, 8, 8)
    y = torch.tensor([0, 1, 2, 3])
    loss = F.cross_entropy(model(x + prompt), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "prompt": prompt, "loss": loss}
