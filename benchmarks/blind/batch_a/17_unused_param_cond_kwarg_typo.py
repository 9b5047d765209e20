"""MedSegDiff-style conditional denoiser (ImprintLab/MedSegDiff#27, "a layer
defined in __init__ but not used in forward"): the training loop passes the image
as cond_img= while the block looks for cond=, so the conditioning branch is
skipped and cond_proj never gets a grad (DDP: "parameters not used in producing loss").
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.block.cond_proj.weight"
EXPECT = "grad_none"


class CondResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.cond_proj = nn.Conv2d(1, c, 3, padding=1)

    def forward(self, h, **kwargs):
        h = h + F.silu(self.conv(h))
        cond = kwargs.get("cond")
        if cond is None:
            return h  # <-- CUT
        return h + self.cond_proj(cond)


class SegDiffUNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.inp = nn.Conv2d(1, c, 3, padding=1)
        self.time_mlp = nn.Linear(1, c)
        self.block = CondResBlock(c)
        self.out = nn.Conv2d(c, 1, 1)

    def forward(self, x_t, t, **kwargs):
        h = self.inp(x_t) + self.time_mlp(t[:, None].float())[:, :, None, None]
        h = self.block(h, **kwargs)
        return self.out(h)


def run():
    torch.manual_seed(0)
    model = SegDiffUNet()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    img = torch.randn(2, 1, 8, 8)
    mask = (torch.rand(2, 1, 8, 8) > 0.5).float()
    t = torch.randint(0, 100, (2,))
    noise = torch.randn_like(mask)
    x_t = 0.9 * mask + 0.4 * noise
    pred_noise = model(x_t, t, cond_img=img)
    loss = F.mse_loss(pred_noise, noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
