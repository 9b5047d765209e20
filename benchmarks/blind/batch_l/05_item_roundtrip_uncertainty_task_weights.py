"""Multi-task depth + segmentation net with Kendall-style uncertainty weighting. The
learnable log-variances are read with .item() inside the loss module ("to avoid 0-dim
tensor warnings"), both for the precision and for the regulariser, so the weighted sum
is built from Python floats. The shared encoder and both heads train; log_vars never do.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "criterion.log_vars"
EXPECT = "grad_none"


class MultiTaskNet(nn.Module):
    def __init__(self, d_in=16, n_cls=5):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.depth_head = nn.Linear(32, 1)
        self.seg_head = nn.Linear(32, n_cls)

    def forward(self, x):
        h = self.encoder(x)
        return self.depth_head(h).squeeze(-1), self.seg_head(h)


class UncertaintyWeightedLoss(nn.Module):
    def __init__(self, n_tasks=2):
        super().__init__()
        self.log_vars = nn.Parameter(torch.zeros(n_tasks))

    def forward(self, task_losses):
        total = 0.0
        for i, l in enumerate(task_losses):
            s = self.log_vars[i].item()  # <-- CUT
            total = total + torch.exp(torch.tensor(-s)) * l + s
        return total


def run():
    torch.manual_seed(0)
    model = MultiTaskNet()
    criterion = UncertaintyWeightedLoss()
    opt = torch.optim.Adam(list(model.parameters()) + list(criterion.parameters()), lr=1e-3)
    x = torch.randn(32, 16)
    depth_gt = torch.rand(32) * 10
    seg_gt = torch.randint(0, 5, (32,))
    depth, seg = model(x)
    losses = [F.l1_loss(depth, depth_gt), F.cross_entropy(seg, seg_gt)]
    loss = criterion(losses)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "criterion": criterion, "loss": loss}
