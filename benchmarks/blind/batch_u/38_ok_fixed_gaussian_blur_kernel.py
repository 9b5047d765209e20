"""Control (pytorch/pytorch#679, "allow optimizers to skip nn.Parameters that have
requires_grad=False", a Gaussian blur implemented as a conv whose weight must not
change): the blur kernel is a Parameter with requires_grad=False and the optimizer is
built from the filtered parameter list. The cut is intended; the learnable conv after
the blur still gets a normal gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.conv.weight"
EXPECT = "grad_ok"


class GaussianBlur(nn.Module):
    def __init__(self, kernel_size=5, sigma=1.0):
        super().__init__()
        ax = torch.arange(kernel_size, dtype=torch.float32) - kernel_size // 2
        g = torch.exp(-(ax ** 2) / (2 * sigma ** 2))
        k = (g[:, None] * g[None, :]) / (g.sum() ** 2)
        self.weight = nn.Parameter(k.expand(3, 1, kernel_size, kernel_size).clone(), requires_grad=False)

    def forward(self, x):
        return F.conv2d(x, self.weight, padding=self.weight.shape[-1] // 2, groups=3)


class DenoiseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.blur = GaussianBlur()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        return x + self.conv(self.blur(x))


def run():
    torch.manual_seed(0)
    model = DenoiseNet()
    opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01)
    noisy, clean = torch.randn(2, 3, 10, 10), torch.randn(2, 3, 10, 10)
    opt.zero_grad()
    loss = F.mse_loss(model(noisy), clean)  # <-- CUT
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
