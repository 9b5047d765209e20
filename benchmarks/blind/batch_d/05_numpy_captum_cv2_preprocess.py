"""Integrated-gradients style attribution through a detector whose
preprocessing (warp/normalise, cv2-like) is written in numpy, so the wrapper
forward calls `.detach().cpu().numpy()` on the input. torch.autograd.grad then
raises "One of the differentiated Tensors appears to not have been used in the
graph" (meta-pytorch/captum#932).
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

MEAN = np.array([103.53, 116.28, 123.675], dtype=np.float32)
STD = np.array([57.375, 57.12, 58.395], dtype=np.float32)


def warp_and_normalize(img_hwc):
    """Pipeline step from the detector repo: flips to BGR, resizes (nearest), normalises."""
    img = img_hwc[..., ::-1].astype(np.uint8).astype(np.float32)
    img = img[::2, ::2]
    return (img - MEAN) / STD


class WrappedModel(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, inputs):
        batch = []
        for x in inputs:
            arr = x.detach().cpu().numpy().transpose(1, 2, 0)  # <-- CUT
            arr = warp_and_normalize(arr)
            batch.append(torch.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1))))
        return self.net(torch.stack(batch))


def integrated_gradients(model, inputs, baseline, target, n_steps=4):
    alphas = torch.linspace(0, 1, n_steps)
    scaled = torch.cat([baseline + a * (inputs - baseline) for a in alphas]).requires_grad_(True)
    scores = model(scaled)[:, target].sum()
    grads = torch.autograd.grad(scores, scaled)[0]
    return (inputs - baseline) * grads.view(n_steps, *inputs.shape).mean(0)


def run():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                        nn.Flatten(), nn.Linear(8, 5))
    model = WrappedModel(net).eval()
    image = torch.rand(1, 3, 16, 16) * 255
    attributions = integrated_gradients(model, image, torch.zeros_like(image), target=2)
    return {"model": model, "attributions": attributions}
