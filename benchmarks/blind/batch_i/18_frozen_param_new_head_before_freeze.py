"""Transfer learning where the pretrained backbone is frozen on purpose, but the
setup replaces the classifier first and runs the freeze loop afterwards, over the
whole model. Every parameter ends up with requires_grad=False, so loss.backward()
raises "element 0 of tensors does not require grad and does not have a grad_fn".
Thread: SO, fine-tuning: freeze loop after replacing fc (recalled family of questions).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

CONFIG = {"num_classes": 4, "freeze_backbone": True, "lr": 1e-3}


class PretrainedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(8, 1000)

    def forward(self, x):
        return self.fc(self.body(x))


def build_model(cfg):
    model = PretrainedNet()
    model.fc = nn.Linear(model.fc.in_features, cfg["num_classes"])
    if cfg["freeze_backbone"]:
        for param in model.parameters():
            param.requires_grad = False  # <-- CUT
    return model


def run():
    torch.manual_seed(0)
    model = build_model(CONFIG)
    opt = torch.optim.Adam(model.parameters(), lr=CONFIG["lr"])
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, CONFIG["num_classes"], (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
