"""Mobile hair segmentation (wonbeomjang/mobile-hair-segmentation-pytorch#3):
ImageGradientLoss uses pred.argmax(1).view(...).float(), which is not
differentiable. When fine-tuning with only the image-gradient consistency loss
(BCE weight 0) there is no graph left and backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ImageGradientLoss(nn.Module):
    def __init__(self):
        super().__init__()
        k = torch.tensor([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])
        self.register_buffer("sobel_x", k.view(1, 1, 3, 3))
        self.register_buffer("sobel_y", k.t().contiguous().view(1, 1, 3, 3))

    def grad_mag(self, x):
        return torch.sqrt(F.conv2d(x, self.sobel_x, padding=1) ** 2 + F.conv2d(x, self.sobel_y, padding=1) ** 2 + 1e-6)

    def forward(self, pred, image):
        size = pred.size()
        pred = pred.argmax(1).view(size[0], 1, size[2], size[3]).float()  # <-- CUT
        gray = image.mean(1, keepdim=True)
        g_img, g_pred = self.grad_mag(gray), self.grad_mag(pred)
        return (g_pred * (1 - g_img ** 2)).sum() / (g_pred.sum() + 1e-6)


class HairMatteNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 1))

    def forward(self, x):
        return self.net(x)


def run():
    torch.manual_seed(0)
    config = {"bce_weight": 0.0, "grad_loss_weight": 0.5}
    model = HairMatteNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    image, mask = torch.rand(2, 3, 8, 8), torch.randint(0, 2, (2, 8, 8))
    pred = model(image)
    loss = 0.0
    if config["bce_weight"] > 0:
        loss = loss + config["bce_weight"] * F.cross_entropy(pred, mask)
    loss = loss + config["grad_loss_weight"] * ImageGradientLoss()(pred, image)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
