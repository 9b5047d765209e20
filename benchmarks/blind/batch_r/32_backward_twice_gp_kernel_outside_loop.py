"""GP surrogate hyperparameter fitting: the kernel matrix is built once from the learnable
lengthscale before the optimisation loop "to save time". The first iteration's backward
frees its graph, so the second iteration raises "backward through the graph a second time".
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class RBF(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_ls = nn.Parameter(torch.tensor(0.0))

    def forward(self, a, b):
        d2 = torch.cdist(a, b).pow(2)
        return torch.exp(-0.5 * d2 / self.log_ls.exp() ** 2)


def neg_mll(K, y, log_noise):
    Kn = K + log_noise.exp() * torch.eye(K.shape[0])
    L = torch.linalg.cholesky(Kn)
    alpha = torch.cholesky_solve(y[:, None], L)
    return 0.5 * (y[:, None] * alpha).sum() + torch.log(torch.diagonal(L)).sum()


def run():
    torch.manual_seed(0)
    x = torch.linspace(0, 3, 10)[:, None]
    y = torch.sin(2 * x[:, 0])
    kern = RBF()
    log_noise = nn.Parameter(torch.tensor(-2.0))
    opt = torch.optim.Adam(list(kern.parameters()) + [log_noise], lr=0.05)
    K = kern(x, x)  # <-- CUT
    for it in range(3):
        loss = neg_mll(K, y, log_noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"kern": kern, "loss": loss}
