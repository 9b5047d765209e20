"""DeepSDF-style auto-decoder: one latent code per shape, optimised jointly with
the coordinate MLP. The latent table is a plain torch.zeros tensor (not an
nn.Parameter, no requires_grad) that is added to the optimizer by hand, so the
decoder trains and latents.grad stays None.
"""
import torch
import torch.nn as nn

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "latents"
EXPECT = "grad_none"


class SDFDecoder(nn.Module):
    def __init__(self, d_lat=8, width=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_lat + 3, width), nn.Softplus(beta=100),
                                 nn.Linear(width, width), nn.Softplus(beta=100), nn.Linear(width, 1))

    def forward(self, z, xyz):
        return self.net(torch.cat([z, xyz], -1))


def run():
    torch.manual_seed(0)
    n_shapes, d_lat = 4, 8
    decoder = SDFDecoder(d_lat)
    latents = torch.zeros(n_shapes, d_lat)  # <-- CUT
    torch.nn.init.normal_(latents, 0.0, 0.01)
    opt = torch.optim.Adam([{"params": decoder.parameters(), "lr": 5e-4}, {"params": [latents], "lr": 1e-3}])
    shape_ids = torch.randint(0, n_shapes, (64,))
    xyz = torch.rand(64, 3) * 2 - 1
    radii = 0.3 + 0.1 * shape_ids.float()
    sdf_gt = xyz.norm(dim=-1, keepdim=True) - radii[:, None]
    pred = decoder(latents[shape_ids], xyz)
    loss = (pred.clamp(-0.1, 0.1) - sdf_gt.clamp(-0.1, 0.1)).abs().mean() + 1e-4 * latents.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"decoder": decoder, "latents": latents, "loss": loss}
