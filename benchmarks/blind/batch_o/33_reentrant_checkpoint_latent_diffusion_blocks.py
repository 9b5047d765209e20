"""Latent diffusion: latents come from a frozen VAE encoder (no grad), and the
denoiser's residual blocks are wrapped in checkpoint(..., use_reentrant=True)
to save memory. No checkpoint input requires grad, so the blocks' weights get
None while the un-checkpointed output layer trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "unet.blocks[0].conv1.weight"
EXPECT = "grad_none"


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return x + self.conv2(F.silu(self.conv1(F.silu(x))))


class TinyUNet(nn.Module):
    def __init__(self, c=4, grad_ckpt=True):
        super().__init__()
        self.blocks = nn.ModuleList([ResBlock(c) for _ in range(2)])
        self.out = nn.Conv2d(c, c, 1)
        self.grad_ckpt = grad_ckpt

    def forward(self, z):
        h = z
        for blk in self.blocks:
            if self.grad_ckpt:
                h = checkpoint(blk, h, use_reentrant=True)  # <-- CUT
            else:
                h = blk(h)
        return self.out(h)


def run():
    torch.manual_seed(0)
    vae_enc = nn.Conv2d(3, 4, 4, stride=4).requires_grad_(False)
    unet = TinyUNet()
    opt = torch.optim.AdamW(unet.parameters(), lr=1e-4)
    imgs = torch.rand(2, 3, 16, 16)
    with torch.no_grad():
        z0 = vae_enc(imgs) * 0.18
    alpha_bar = torch.tensor([0.7, 0.3]).view(2, 1, 1, 1)
    eps = torch.randn_like(z0)
    z_t = alpha_bar.sqrt() * z0 + (1 - alpha_bar).sqrt() * eps
    loss = F.mse_loss(unet(z_t), eps)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"unet": unet, "loss": loss}
