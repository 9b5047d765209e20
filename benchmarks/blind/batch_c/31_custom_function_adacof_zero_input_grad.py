"""AdaCoF-style frame interpolation with a custom autograd.Function: its backward
computes the gradient for the per-pixel kernel weights but returns zeros for the frame
input ("inputs are images, no gradient needed"). Here a learnable pre-enhancement conv
produces those frames, so its weight gradient is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.enhance.weight"
EXPECT = "grad_zero"

OFFSETS = [(0, 0), (0, 1), (1, 0), (1, 1), (-1, 0), (0, -1), (-1, -1), (1, -1), (-1, 1)]


def shifted(x, dy, dx):
    return torch.roll(x, shifts=(dy, dx), dims=(2, 3))


class AdaCoFFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, frame, weight):
        ctx.save_for_backward(frame, weight)
        out = torch.zeros_like(frame)
        for k, (dy, dx) in enumerate(OFFSETS):
            out = out + weight[:, k:k + 1] * shifted(frame, dy, dx)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        frame, weight = ctx.saved_tensors
        grad_weight = torch.stack([(grad_output * shifted(frame, dy, dx)).sum(dim=1)
                                   for dy, dx in OFFSETS], dim=1)
        grad_input = torch.zeros_like(frame)
        return grad_input, grad_weight  # <-- CUT


class KernelEstimation(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(6, 16, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(16, len(OFFSETS), 3, padding=1))

    def forward(self, f0, f1):
        return F.softmax(self.net(torch.cat([f0, f1], dim=1)), dim=1)


class AdaCoFNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enhance = nn.Conv2d(3, 3, 3, padding=1)
        self.kernel_est = KernelEstimation()

    def forward(self, frame0, frame2):
        f0, f2 = self.enhance(frame0), self.enhance(frame2)
        w0, w2 = self.kernel_est(frame0, frame2), self.kernel_est(frame2, frame0)
        return 0.5 * (AdaCoFFunction.apply(f0, w0) + AdaCoFFunction.apply(f2, w2))


def run():
    torch.manual_seed(0)
    model = AdaCoFNet()
    optimizer = torch.optim.Adamax(model.parameters(), lr=1e-3)
    frame0, frame1, frame2 = torch.rand(2, 3, 12, 12), torch.rand(2, 3, 12, 12), torch.rand(2, 3, 12, 12)
    pred = model(frame0, frame2)
    loss = F.l1_loss(pred, frame1)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
