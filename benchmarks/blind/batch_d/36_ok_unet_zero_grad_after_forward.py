"""Control (milesial/Pytorch-UNet#378): the training loop runs the model and
computes the loss first, and only then calls
`optimizer.zero_grad(set_to_none=True)` before the scaled backward. The user
suspects this wipes the gradients; it does not, because zeroing happens before
backward, and the grads are there for grad_scaler.step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.inc[0].weight"
EXPECT = "grad_ok"


def dice_loss(input, target, epsilon=1e-6):
    inter = 2 * (input * target).sum(dim=(-1, -2))
    sets_sum = input.sum(dim=(-1, -2)) + target.sum(dim=(-1, -2))
    return 1 - ((inter + epsilon) / (sets_sum + epsilon)).mean()


class UNet(nn.Module):
    def __init__(self, n_channels=3, n_classes=2):
        super().__init__()
        self.inc = nn.Sequential(nn.Conv2d(n_channels, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.down = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.outc = nn.Conv2d(16, n_classes, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down(x1)
        return self.outc(torch.cat([x1, self.up(x2)], dim=1))


def run():
    torch.manual_seed(0)
    model = UNet()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-5, weight_decay=1e-8, momentum=0.999)
    grad_scaler = torch.amp.GradScaler("cpu", enabled=False)
    criterion = nn.CrossEntropyLoss()
    images = torch.randn(2, 3, 8, 8)
    true_masks = torch.randint(0, 2, (2, 8, 8))
    masks_pred = model(images)
    loss = criterion(masks_pred, true_masks)
    loss = loss + dice_loss(F.softmax(masks_pred, dim=1)[:, 1], true_masks.float())  # <-- CUT
    optimizer.zero_grad(set_to_none=True)
    grad_scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    grad_scaler.step(optimizer)
    grad_scaler.update()
    return {"model": model, "loss": loss}
