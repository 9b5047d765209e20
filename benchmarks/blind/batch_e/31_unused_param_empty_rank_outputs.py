"""A rank whose forward produces no outputs (pytorch/pytorch#40566): the mask head only
runs on images that have instances; on a rank where the batch has none, forward
returns an empty list, the loss function turns the empty list into a constant, and
backward runs without touching any parameter, so the head gets no gradient (DDP
cannot handle this case at all).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.mask_head[0].weight"
EXPECT = "grad_none"


class InstanceMaskModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask_head = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))

    def forward(self, images, instance_counts):
        keep = [i for i, n in enumerate(instance_counts) if n > 0]
        if not keep:
            return []  # <-- CUT
        return [self.mask_head(images[i:i + 1]) for i in keep]


def mask_loss(outputs, targets):
    if len(outputs) == 0:
        return torch.zeros((), requires_grad=True)
    return sum(F.binary_cross_entropy_with_logits(o, t) for o, t in zip(outputs, targets)) / len(outputs)


def run():
    torch.manual_seed(0)
    model = InstanceMaskModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    images = torch.randn(2, 3, 8, 8)
    instance_counts = [0, 0]
    targets = [torch.zeros(1, 1, 8, 8), torch.zeros(1, 1, 8, 8)]
    opt.zero_grad()
    outputs = model(images, instance_counts)
    loss = mask_loss(outputs, targets)
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "outputs": outputs}
