"""Imagen-style UNet: final_res_block is built with time_cond_dim, so it owns a
time_mlp, but forward calls self.final_res_block(x) without the time condition.
The block's `if time_emb is not None` branch is skipped; DDP reports
final_res_block.time_mlp.1.weight as not receiving grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "unet.final_res_block.time_mlp[1].weight"
EXPECT = "grad_none"


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, time_cond_dim=None):
        super().__init__()
        self.time_mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_cond_dim, dim_out * 2)) if time_cond_dim else None
        self.block1 = nn.Conv2d(dim, dim_out, 3, padding=1)
        self.block2 = nn.Conv2d(dim_out, dim_out, 3, padding=1)

    def forward(self, x, time_emb=None):
        scale_shift = None
        if self.time_mlp is not None and time_emb is not None:
            scale_shift = self.time_mlp(time_emb)[:, :, None, None].chunk(2, dim=1)
        h = self.block1(x)
        if scale_shift is not None:
            scale, shift = scale_shift
            h = h * (scale + 1) + shift
        return self.block2(F.silu(h)) + x


class Unet(nn.Module):
    def __init__(self, dim=8, cond_dim=16):
        super().__init__()
        self.init_conv = nn.Conv2d(3, dim, 3, padding=1)
        self.to_time_cond = nn.Sequential(nn.Linear(1, cond_dim), nn.SiLU())
        self.mid_block = ResnetBlock(dim, dim, time_cond_dim=cond_dim)
        self.final_res_block = ResnetBlock(dim, dim, time_cond_dim=cond_dim)
        self.final_conv = nn.Conv2d(dim, 3, 1)

    def forward(self, x, times):
        t = self.to_time_cond(times[:, None])
        x = self.init_conv(x)
        x = self.mid_block(x, t)
        x = self.final_res_block(x)  # <-- CUT
        return self.final_conv(x)


def run():
    torch.manual_seed(0)
    unet = Unet()
    opt = torch.optim.Adam(unet.parameters(), lr=1e-4)
    x = torch.randn(2, 3, 8, 8)
    times = torch.rand(2)
    noise = torch.randn_like(x)
    loss = F.mse_loss(unet(x + noise * times[:, None, None, None], times), noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"unet": unet, "loss": loss}
