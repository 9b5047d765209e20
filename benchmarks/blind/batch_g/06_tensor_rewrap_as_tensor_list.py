"""Physics-informed net with auxiliary variables: the residual terms for the two
PDE components are gathered with `torch.as_tensor([r_u, r_v])`, whose docs say
it "preserves autograd history if possible". For a list of tensors it does not:
the PDE loss is a fresh leaf, so the network only learns from the data loss.
"""
import torch
import torch.nn as nn

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "aux_net.net[0].weight"
EXPECT = "grad_none"


class FNN(nn.Module):
    def __init__(self, layers):
        super().__init__()
        mods = []
        for a, b in zip(layers[:-1], layers[1:]):
            mods += [nn.Linear(a, b), nn.Tanh()]
        self.net = nn.Sequential(*mods[:-1])

    def forward(self, x):
        return self.net(x)


def as_tensor(data, dtype=None):
    # backend helper: "convert anything to a tensor"
    return torch.as_tensor(data, dtype=dtype)


def pde_residuals(x, uv, aux):
    u, v = uv[:, 0:1], uv[:, 1:2]
    du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    dv = torch.autograd.grad(v.sum(), x, create_graph=True)[0]
    r_u = (du[:, 0:1] - aux * v).pow(2).mean()
    r_v = (dv[:, 0:1] + aux * u).pow(2).mean()
    residual = as_tensor([r_u, r_v], dtype=torch.float32)  # <-- CUT
    return residual


def run():
    torch.manual_seed(0)
    net = FNN([2, 16, 16, 2])
    aux_net = FNN([2, 8, 1])          # auxiliary variable a(x, t)
    opt = torch.optim.Adam(list(net.parameters()) + list(aux_net.parameters()), lr=1e-3)

    x_col = torch.rand(32, 2, requires_grad=True)
    x_obs = torch.rand(8, 2)
    uv_obs = torch.sin(x_obs)

    uv_col = net(x_col)
    aux = aux_net(x_col)
    residual = pde_residuals(x_col, uv_col, aux)
    loss_pde = residual.sum()
    loss_data = (net(x_obs) - uv_obs).pow(2).mean()
    loss = loss_data + 1.0 * loss_pde

    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "aux_net": aux_net, "loss": loss, "residual": residual}
