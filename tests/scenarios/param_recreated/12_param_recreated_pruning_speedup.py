"""NNI pruning then fine-tuning (microsoft/nni#4521): the optimizer is built on
the dense model, then ModelSpeedup replaces the pruned convolutions with new,
smaller layers. Fine-tuning uses the old optimizer; its registered conv weight
is no longer in the model and never gets a .grad, and the new layers never update.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "optimizer.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class VGGish(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return self.fc(x.mean(dim=(2, 3)))


class ModelSpeedup:
    """Replace masked layers with physically smaller ones and copy the kept weights."""

    def __init__(self, model, masks):
        self.model, self.masks = model, masks

    def speedup_model(self):
        keep = self.masks["conv1"].nonzero().flatten()
        old1, old2 = self.model.conv1, self.model.conv2
        new1 = nn.Conv2d(3, len(keep), 3, padding=1)
        new2 = nn.Conv2d(len(keep), old2.out_channels, 3, padding=1)
        with torch.no_grad():
            new1.weight.copy_(old1.weight[keep])
            new1.bias.copy_(old1.bias[keep])
            new2.weight.copy_(old2.weight[:, keep])
            new2.bias.copy_(old2.bias)
        self.model.conv1 = new1  # <-- CUT
        self.model.conv2 = new2


def trainer(model, optimizer, criterion, x, y):
    model.train()
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def run():
    torch.manual_seed(0)
    model = VGGish()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    x, y = torch.randn(8, 3, 8, 8), torch.randint(0, 10, (8,))
    trainer(model, optimizer, nn.CrossEntropyLoss(), x, y)  # pre-training epoch
    masks = {"conv1": (torch.arange(16) % 2 == 0).float()}
    ModelSpeedup(model, masks).speedup_model()
    optimizer.zero_grad()
    loss = trainer(model, optimizer, nn.CrossEntropyLoss(), x, y)  # fine-tuning
    return {"model": model, "optimizer": optimizer, "loss": loss}
