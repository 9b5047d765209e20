"""After ligerlac/torchlogix#17 ("you should not convert torch tensors to numpy arrays and back
in the forward pass, it breaks the computational graph"): a differentiable logic-gate conv
layer gathers its receptive-field pairs with numpy fancy indexing and returns to torch with
torch.from_numpy. Stacked twice, the first layer's gate logits get .grad None.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.conv1.weights"
EXPECT = "grad_none"


def bin_op_s(a, b, w):
    """Soft relaxation of 4 of the 16 two-input logic gates (AND, OR, XOR, NAND)."""
    ops = torch.stack([a * b, a + b - a * b, a + b - 2 * a * b, 1 - a * b], dim=-1)
    return (ops * F.softmax(w, dim=-1)).sum(-1)


class LogicConv2d(nn.Module):
    def __init__(self, in_ch, out_ch, k=3, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.k, self.out_ch = k, out_ch
        n_rf = in_ch * k * k
        self.idx_a = rng.integers(0, n_rf, size=out_ch)
        self.idx_b = rng.integers(0, n_rf, size=out_ch)
        self.weights = nn.Parameter(torch.randn(out_ch, 4))

    def forward(self, x):
        b, c, h, w = x.shape
        cols = F.unfold(x, self.k, padding=self.k // 2)               # B, C*k*k, H*W
        cols_np = cols.detach().cpu().numpy()  # <-- CUT
        a = torch.from_numpy(np.ascontiguousarray(cols_np[:, self.idx_a]))
        bb = torch.from_numpy(np.ascontiguousarray(cols_np[:, self.idx_b]))
        out = bin_op_s(a, bb, self.weights[None, :, None, :].expand(b, -1, h * w, -1))
        return out.view(b, self.out_ch, h, w)


class LogicNet(nn.Module):
    def __init__(self, n_cls=4, tau=4.0):
        super().__init__()
        self.conv1 = LogicConv2d(1, 8, seed=0)
        self.conv2 = LogicConv2d(8, 8, seed=1)
        self.tau = tau
        self.n_cls = n_cls

    def forward(self, x):
        x = self.conv2(self.conv1(x))
        group_sum = x.flatten(1).view(x.shape[0], self.n_cls, -1).sum(-1)
        return group_sum / self.tau


def run():
    torch.manual_seed(0)
    model = LogicNet()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x = (torch.rand(4, 1, 6, 6) > 0.5).float()
    y = torch.randint(0, 4, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
