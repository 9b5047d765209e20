"""Input saliency for a timm-style CNN trained with --channels-last: the user marks the image as
requiring grad, then follows the training script and rebinds it with
`img = img.to(memory_format=torch.channels_last)`; `img.grad` is None because img is now a copy.
"""
import torch
import torch.nn as nn

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "img"
EXPECT = "grad_none"


class ConvNet(nn.Module):
    def __init__(self, n_cls=5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.head = nn.Linear(16, n_cls)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


def saliency(model, img, target, channels_last):
    img.requires_grad_(True)
    if channels_last:
        img = img.to(memory_format=torch.channels_last)  # <-- CUT
    score = model(img)[0, target]
    model.zero_grad()
    score.backward()
    return img


def run():
    torch.manual_seed(0)
    args = {"channels_last": True}
    model = ConvNet().eval()
    if args["channels_last"]:
        model = model.to(memory_format=torch.channels_last)
    img = torch.randn(1, 3, 16, 16)
    img = saliency(model, img, target=2, channels_last=args["channels_last"])
    return {"model": model, "img": img}
