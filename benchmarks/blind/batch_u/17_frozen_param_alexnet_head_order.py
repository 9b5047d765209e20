"""pytorch/pytorch#1266 (a pretrained AlexNet with every parameter set to
requires_grad=False as the first part of a network, new layers trainable): the user
swaps in the new classifier first and freezes afterwards with a loop over
model.parameters(), which also freezes the new head. Nothing requires grad and
loss.backward() raises "element 0 of tensors does not require grad"."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TinyAlexNet(nn.Module):
    def __init__(self, n_classes=1000):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 5, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(3))
        self.classifier = nn.Sequential(nn.Dropout(0.0), nn.Linear(72, 32), nn.ReLU(), nn.Linear(32, n_classes))

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def build_finetune_model(n_classes):
    model = TinyAlexNet()
    model.classifier[3] = nn.Linear(32, n_classes)  # new task head
    for param in model.parameters():
        param.requires_grad = False  # <-- CUT
    return model


def run():
    torch.manual_seed(0)
    model = build_finetune_model(n_classes=4)
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(trainable or [torch.zeros(1, requires_grad=True)], lr=0.01)
    x = torch.randn(2, 3, 16, 16)
    y = torch.tensor([0, 3])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
