"""Neural SDF with a hash-grid style encoding: normals are the gradient of sigma
w.r.t. the query coordinates. The field wraps its encoding call in
`with torch.no_grad():` (left over from the renderer's inference path), so the
encoded features do not require grad and coords.grad stays None after backward.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "coords"
EXPECT = "grad_none"


class HashGridEncoding(nn.Module):
    """Multi-resolution dense grids with trilinear-ish lookup (tiny stand-in)."""

    def __init__(self, levels=3, base_res=4, feat=2):
        super().__init__()
        self.grids = nn.ParameterList(
            [nn.Parameter(torch.randn(1, feat, base_res * 2 ** l, base_res * 2 ** l, base_res * 2 ** l) * 0.1)
             for l in range(levels)]
        )

    def forward(self, x):
        g = (x * 2 - 1).view(1, -1, 1, 1, 3)
        feats = [F.grid_sample(grid, g, align_corners=True).view(grid.shape[1], -1).t() for grid in self.grids]
        return torch.cat(feats, dim=-1)


class SDFField(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.encoding = HashGridEncoding(**config["encoding"])
        dims = [config["encoding"]["levels"] * config["encoding"]["feat"]] + config["mlp"]["hidden"] + [1]
        layers = []
        for a, b in zip(dims[:-1], dims[1:]):
            layers += [nn.Linear(a, b), nn.Softplus(beta=100)]
        self.mlp = nn.Sequential(*layers[:-1])
        self.freeze_encoding = config.get("freeze_encoding", False)

    def density(self, x):
        with torch.no_grad():
            h = self.encoding(x)  # <-- CUT
        return self.mlp(h)


def run():
    torch.manual_seed(0)
    config = {"encoding": {"levels": 3, "base_res": 4, "feat": 2}, "mlp": {"hidden": [16, 16]}}
    field = SDFField(config)
    opt = torch.optim.Adam(field.parameters(), lr=1e-3)

    coords = torch.rand(64, 3)
    target = (coords - 0.5).norm(dim=-1, keepdim=True) - 0.3   # ground-truth SDF samples
    coords.requires_grad_()
    sigma = field.density(coords)
    loss = F.l1_loss(sigma, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    normals = coords.grad
    return {"field": field, "coords": coords, "sigma": sigma, "normals": normals, "loss": loss}
