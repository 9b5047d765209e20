"""AdaIR-style frequency module: a small conv predicts the low/high frequency
split rate per image, which is turned into a radius with `.int()` and used to
build the FFT mask. The cast to int cuts the graph, so rate_conv never gets a
gradient and the adaptive frequency split never learns.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fre.rate_conv[0].weight"
EXPECT = "grad_none"


class FreModule(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.rate_conv = nn.Sequential(nn.Conv2d(dim, dim // 2, 1), nn.GELU(), nn.Conv2d(dim // 2, 1, 1))
        self.high_proj = nn.Conv2d(dim, dim, 1)
        self.low_proj = nn.Conv2d(dim, dim, 1)

    def fft_split(self, x, rate):
        b, c, h, w = x.shape
        threshold = (rate * min(h, w) / 2).int()  # <-- CUT
        freq = torch.fft.fftshift(torch.fft.fft2(x, norm="ortho"), dim=(-2, -1))
        yy, xx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        dist = ((yy - h // 2).abs().maximum((xx - w // 2).abs()))[None]          # 1,h,w
        mask = (dist <= threshold.view(b, 1, 1)).float().unsqueeze(1)           # b,1,h,w
        low = torch.fft.ifft2(torch.fft.ifftshift(freq * mask, dim=(-2, -1)), norm="ortho").real
        high = torch.fft.ifft2(torch.fft.ifftshift(freq * (1 - mask), dim=(-2, -1)), norm="ortho").real
        return low, high

    def forward(self, x):
        rate = torch.sigmoid(self.rate_conv(x).mean(dim=(2, 3)))                # b,1
        low, high = self.fft_split(x, rate)
        return x + self.low_proj(low) + self.high_proj(high)


class AdaIRTiny(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, 3, padding=1)
        self.fre = FreModule(dim)
        self.out = nn.Conv2d(dim, 3, 3, padding=1)

    def forward(self, x):
        return x + self.out(self.fre(self.embed(x)))


def run():
    torch.manual_seed(0)
    model = AdaIRTiny()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-4, betas=(0.9, 0.999))
    clean = torch.rand(2, 3, 16, 16)
    degraded = clean + 0.1 * torch.randn_like(clean)
    restored = model(degraded)
    loss = F.l1_loss(restored, clean)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
