"""Soft-DTW loss example (Maghoumi/pytorch-softdtw-cuda#25): x is created with
requires_grad=True and then moved with x = x.to(device, ...) before computing
the loss. The rebound x is a copy, not the leaf, so x.grad is None and torch
warns that a non-leaf .grad is being accessed.
"""
import torch

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "x"
EXPECT = "grad_none"


class SoftDTW(torch.nn.Module):
    def __init__(self, gamma=0.1):
        super().__init__()
        self.gamma = gamma

    def softmin(self, a, b, c):
        z = torch.stack([a, b, c], dim=-1)
        return -self.gamma * torch.logsumexp(-z / self.gamma, dim=-1)

    def forward(self, x, y):
        D = torch.cdist(x, y) ** 2
        B, N, M = D.shape
        R = [[None] * (M + 1) for _ in range(N + 1)]
        inf = torch.full((B,), float("inf"), dtype=D.dtype)
        for i in range(N + 1):
            for j in range(M + 1):
                R[i][j] = inf
        R[0][0] = torch.zeros(B, dtype=D.dtype)
        for i in range(1, N + 1):
            for j in range(1, M + 1):
                R[i][j] = D[:, i - 1, j - 1] + self.softmin(R[i - 1][j - 1], R[i - 1][j], R[i][j - 1])
        return R[N][M]


def run():
    torch.manual_seed(0)
    device = torch.device("cpu")
    batch_size, len_x, len_y, dims = 2, 5, 4, 3
    x = torch.rand((batch_size, len_x, dims), requires_grad=True)
    y = torch.rand((batch_size, len_y, dims))
    x = x.to(device, dtype=torch.float64)  # <-- CUT
    y = y.to(device, dtype=torch.float64)
    sdtw = SoftDTW(gamma=0.1)
    loss = sdtw(x, y)
    loss.mean().backward()
    return {"x": x, "y": y, "loss": loss}
