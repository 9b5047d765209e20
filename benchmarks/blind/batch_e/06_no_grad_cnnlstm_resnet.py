"""CNN-LSTM video classifier (pranoyr/cnn-lstm#6): forward runs the ResNet on each
frame inside `with torch.no_grad():` and feeds the features to an LSTM. The user asks
whether the ResNet is trained; the maintainer confirms it is not. The LSTM and the
classifier get gradients, the ResNet's conv weights stay None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.resnet[0].weight"
EXPECT = "grad_none"


def tiny_resnet(out_dim=16):
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
        nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, out_dim))


class CNNLSTM(nn.Module):
    def __init__(self, num_classes=2):
        super().__init__()
        self.resnet = tiny_resnet(16)
        self.lstm = nn.LSTM(input_size=16, hidden_size=32, num_layers=2)
        self.fc1 = nn.Linear(32, 16)
        self.fc2 = nn.Linear(16, num_classes)

    def forward(self, x_3d):
        hidden = None
        for t in range(x_3d.size(1)):
            with torch.no_grad():
                x = self.resnet(x_3d[:, t, :, :, :])  # <-- CUT
            out, hidden = self.lstm(x.unsqueeze(0), hidden)
        x = self.fc1(out[-1, :, :])
        x = F.relu(x)
        return self.fc2(x)


def train_epoch(model, loader, criterion, optimizer):
    model.train()
    losses = []
    for clips, targets in loader:
        optimizer.zero_grad()
        outputs = model(clips)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)


def run():
    torch.manual_seed(0)
    model = CNNLSTM()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    clips = torch.randn(2, 4, 3, 16, 16)
    targets = torch.tensor([0, 1])
    avg = train_epoch(model, [(clips, targets)], criterion, optimizer)
    return {"model": model, "optimizer": optimizer, "avg_loss": avg}
