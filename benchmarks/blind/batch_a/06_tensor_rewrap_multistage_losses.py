"""Multi-stage restoration network (MC-E/Deep-Generalized-Unfolding-Networks#6):
np.sum over per-stage losses failed on CUDA, so the user switched to
torch.tensor([criterion(restored[j], target) ...], requires_grad=True).sum().
Training runs but PSNR never changes: model.stages[0].weight.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.stages[0].weight"
EXPECT = "grad_none"


class CharbonnierLoss(nn.Module):
    def __init__(self, eps=1e-3):
        super().__init__()
        self.eps = eps

    def forward(self, x, y):
        return torch.mean(torch.sqrt((x - y) ** 2 + self.eps ** 2))


class UnfoldingNet(nn.Module):
    def __init__(self, n_stages=3, c=3):
        super().__init__()
        self.stages = nn.ModuleList(nn.Conv2d(c, c, 3, padding=1) for _ in range(n_stages))

    def forward(self, x):
        outs, h = [], x
        for stage in self.stages:
            h = h + stage(h)
            outs.append(h)
        return outs[::-1]


def run():
    torch.manual_seed(0)
    model = UnfoldingNet()
    criterion_char = CharbonnierLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    target = torch.rand(2, 3, 16, 16)
    input_ = target + 0.1 * torch.randn_like(target)
    for epoch in range(2):
        optimizer.zero_grad()
        restored = model(input_)
        loss_char = torch.tensor([criterion_char(restored[j], target) for j in range(len(restored))],  # <-- CUT
                                 requires_grad=True).sum()
        loss = loss_char
        loss.backward()
        optimizer.step()
    return {"model": model, "loss": loss}
