"""Fine-tuning: the classifier head is replaced first and the freeze loop
`for p in model.parameters(): p.requires_grad = False` runs afterwards, so
the new head is frozen too. Nothing requires grad and backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.classifier = nn.Linear(8, 100)

    def forward(self, x):
        return self.classifier(self.features(x).mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    model = SmallNet()
    model.classifier = nn.Linear(8, 4)
    for p in model.parameters():
        p.requires_grad = False  # <-- CUT
    opt = torch.optim.SGD(model.classifier.parameters(), lr=0.01)
    x, y = torch.randn(2, 3, 6, 6), torch.tensor([0, 3])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
