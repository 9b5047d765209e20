"""IM-NET-style implicit decoder where the leaky clamp
max(min(l7, 0.01*l7 + 0.99), 0.01*l7) was swapped for a hard clamp(l7, 0, 1). With a
large positive output bias every occupancy prediction sits above 1, the clamp
passes zero gradient, and the decoder's first layer gets an all-zero grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "decoder.linear_1.weight"
EXPECT = "grad_zero"


class Generator(nn.Module):
    def __init__(self, z_dim=8, point_dim=3, gf_dim=16):
        super().__init__()
        self.linear_1 = nn.Linear(z_dim + point_dim, gf_dim)
        self.linear_2 = nn.Linear(gf_dim, gf_dim)
        self.linear_7 = nn.Linear(gf_dim, 1)
        nn.init.constant_(self.linear_7.bias, 5.0)

    def forward(self, points, z):
        zs = z.unsqueeze(1).expand(-1, points.shape[1], -1)
        h = F.leaky_relu(self.linear_1(torch.cat([points, zs], 2)), 0.02)
        h = F.leaky_relu(self.linear_2(h), 0.02)
        l7 = self.linear_7(h) * 0.1 + self.linear_7.bias
        return torch.clamp(l7, 0.0, 1.0)  # <-- CUT


def run():
    torch.manual_seed(0)
    decoder = Generator()
    opt = torch.optim.Adam(decoder.parameters(), lr=5e-5, betas=(0.5, 0.999))
    points = torch.rand(2, 32, 3) - 0.5
    z = torch.randn(2, 8) * 0.1
    values = (points.norm(dim=-1, keepdim=True) < 0.3).float()
    net_out = decoder(points, z)
    err = torch.mean((net_out - values) ** 2)
    opt.zero_grad()
    err.backward()
    opt.step()
    return {"decoder": decoder, "err": err}
