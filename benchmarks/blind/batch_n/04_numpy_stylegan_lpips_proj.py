"""StyleGAN projector: the synthesized image is converted to numpy for a uint8 clamp before the
perceptual distance, so the latent w gets no grad (the noise buffers still train).
Thread: StyleGAN2 projector ports, "w_opt grad is None" (reconstructed from memory)."""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "w_opt"
EXPECT = "grad_none"


def to_uint8_range(img):
    arr = img.detach().numpy()  # <-- CUT
    arr = np.clip(arr * 127.5 + 128, 0, 255) / 255.0
    return torch.from_numpy(arr).float()


def run():
    torch.manual_seed(0)
    synth = nn.Linear(6, 12)
    w_opt = torch.zeros(1, 6, requires_grad=True)
    noise = torch.zeros(1, 12, requires_grad=True)
    target = torch.rand(1, 12)
    img = to_uint8_range(synth(w_opt))
    dist = ((img + noise - target) ** 2).sum()
    dist.backward()
    return {"w_opt": w_opt}
