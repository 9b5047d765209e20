"""Inverse Burgers problem in a DeepXDE-style PINN: the unknown PDE coefficients are
trainable external variables, and the backend helper packs them with
torch.as_tensor((C1, C2)), which copies the values and drops their history. The
network trains on the PDE and data losses, but C1 never gets a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "C1"
EXPECT = "grad_none"


def Variable(initial_value, dtype=torch.float32):
    return torch.tensor(initial_value, dtype=dtype, requires_grad=True)


def as_tensor(data, dtype=None):
    if isinstance(data, torch.Tensor):
        return data if dtype is None else data.to(dtype)
    return torch.as_tensor(data, dtype=dtype)  # <-- CUT


class FNN(nn.Module):
    def __init__(self, layers=(2, 20, 20, 1)):
        super().__init__()
        mods = []
        for i in range(len(layers) - 1):
            mods.append(nn.Linear(layers[i], layers[i + 1]))
            if i < len(layers) - 2:
                mods.append(nn.Tanh())
        self.net = nn.Sequential(*mods)

    def forward(self, x):
        return self.net(x)


def jacobian(y, x, i):
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True)[0][:, i:i + 1]


def burgers_residual(x, y, variables):
    c1, c2 = variables[0], variables[1]
    dy_x = jacobian(y, x, 0)
    dy_t = jacobian(y, x, 1)
    dy_xx = jacobian(dy_x, x, 0)
    return dy_t + c1 * y * dy_x - c2 * dy_xx


def run():
    torch.manual_seed(0)
    C1 = Variable(0.0)
    C2 = Variable(0.05)
    net = FNN()
    external_trainable_variables = [C1, C2]
    optimizer = torch.optim.Adam(list(net.parameters()) + external_trainable_variables, lr=1e-3)

    x_col = torch.rand(64, 2) * torch.tensor([2.0, 1.0]) - torch.tensor([1.0, 0.0])
    x_col.requires_grad_(True)
    x_obs = torch.rand(16, 2) * torch.tensor([2.0, 1.0]) - torch.tensor([1.0, 0.0])
    y_obs = -torch.sin(3.14159 * x_obs[:, :1]) * torch.exp(-x_obs[:, 1:])

    variables = as_tensor(tuple(external_trainable_variables))
    residual = burgers_residual(x_col, net(x_col), variables)
    loss = (residual ** 2).mean() + ((net(x_obs) - y_obs) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"net": net, "C1": C1, "C2": C2, "optimizer": optimizer, "loss": loss}
