"""A counting model trained with a per-image MAE (pytorch/pytorch#19806, "element 0 of
tensors does not require grad"): the trainer accumulates `loss_sum += err.item()` per
image and builds the batch loss with torch.tensor(loss_sum), then silences the
element-0 error with loss.requires_grad = True. Training "runs", but the density
head never receives a gradient."""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.density[0].weight"
EXPECT = "grad_none"


class CrowdCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.density = nn.Sequential(nn.Conv2d(8, 1, 1), nn.ReLU())

    def forward(self, x):
        return self.density(self.frontend(x))


def train_step(model, optimizer, images, counts):
    optimizer.zero_grad()
    loss_sum = 0.0
    for img, c in zip(images, counts):
        pred = model(img[None]).sum()
        err = (pred - c).abs()
        loss_sum += err.item()  # <-- CUT
    loss = torch.tensor(loss_sum / len(images))
    loss.requires_grad = True
    loss.backward()
    optimizer.step()
    return loss


def run():
    torch.manual_seed(0)
    model = CrowdCounter()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.95)
    images = torch.rand(3, 3, 16, 16)
    counts = torch.tensor([12.0, 30.0, 7.0])
    loss = train_step(model, optimizer, images, counts)
    return {"model": model, "loss": loss}
