"""From autonomousvision/transfuser#335 (Kendall uncertainty-weighted multi-task loss): per-task
weights are applied first, and "a task weighted to 0.0 (e.g. loss_velocity, loss_brake) is
excluded from the uncertainty sum and its log-variance receives no gradient". The `continue`
that skips the zero-weighted group leaves log_vars['velocity'].grad None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.log_vars['velocity']"
EXPECT = "grad_none"

DETAILED_LOSSES_WEIGHTS = {"wp": 1.0, "bev": 1.0, "depth": 0.1, "velocity": 0.0}
UNCERTAINTY_TASK_GROUPS = {"wp": ["wp"], "bev": ["bev"], "depth": ["depth"], "velocity": ["velocity"]}


class LidarCenterNetLite(nn.Module):
    def __init__(self, d=16, uncertainty_weights=True):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, d, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.wp_head = nn.Linear(4 * d, 8)
        self.bev_head = nn.Linear(4 * d, 16)
        self.depth_head = nn.Linear(4 * d, 16)
        self.velocity_head = nn.Linear(4 * d, 1)
        if uncertainty_weights:
            self.log_vars = nn.ParameterDict(
                {g: nn.Parameter(torch.zeros(())) for g in UNCERTAINTY_TASK_GROUPS})

    def forward(self, img):
        f = self.backbone(img)
        return {"wp": self.wp_head(f), "bev": self.bev_head(f),
                "depth": self.depth_head(f), "velocity": self.velocity_head(f)}

    def compute_combined_loss(self, losses):
        total = 0.0
        for group, keys in UNCERTAINTY_TASK_GROUPS.items():
            group_loss = sum(DETAILED_LOSSES_WEIGHTS[k] * losses[k] for k in keys)
            if all(DETAILED_LOSSES_WEIGHTS[k] == 0.0 for k in keys):
                continue  # <-- CUT
            s = self.log_vars[group]
            total = total + 0.5 * torch.exp(-s) * group_loss + 0.5 * s
        return total


def run():
    torch.manual_seed(0)
    model = LidarCenterNetLite()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    img = torch.randn(2, 3, 16, 16)
    targets = {"wp": torch.randn(2, 8), "bev": torch.rand(2, 16), "depth": torch.rand(2, 16),
               "velocity": torch.rand(2, 1)}
    out = model(img)
    losses = {"wp": F.l1_loss(out["wp"], targets["wp"]),
              "bev": F.binary_cross_entropy_with_logits(out["bev"], targets["bev"]),
              "depth": F.l1_loss(out["depth"], targets["depth"]),
              "velocity": F.mse_loss(out["velocity"], targets["velocity"])}
    loss = model.compute_combined_loss(losses)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss, "losses": losses}
