"""Diff-RNTraj road-network constraint loss (wtl52656/Diff-RNTraj#9): the L3 term
is mask = spatial_A_trans[id_sim[:, :-1], id_sim[:, 1:]] == 1e-10 and
loss = torch.sum(mask).float(), where id_sim is an argmax of the predictions:
grad_fn is None. In the constraint-only fine-tuning stage backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Denoiser(nn.Module):
    def __init__(self, n_seg=10, d=16):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.seg_head = nn.Linear(d, n_seg)

    def forward(self, x_t):
        return self.seg_head(F.relu(self.inp(x_t)))


def diff_forward_x0_constraint(model, x_t, spatial_A_trans):
    seg_logits = model(x_t)                      # (B, T, n_seg)
    id_sim = seg_logits.softmax(-1).argmax(-1)  # <-- CUT
    mask = spatial_A_trans[id_sim[:, :-1], id_sim[:, 1:]] == 1e-10
    loss = torch.sum(mask).float()
    return loss


def run():
    torch.manual_seed(0)
    cfg = {"w_noise": 0.0, "w_x0": 0.0, "w_constraint": 1.0}  # constraint fine-tuning stage
    model = Denoiser()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    A = (torch.rand(10, 10) > 0.6).float()
    spatial_A_trans = torch.where(A > 0, A, torch.full_like(A, 1e-10))
    x_t = torch.randn(4, 6, 16)
    loss = 0.0
    if cfg["w_constraint"] > 0:
        loss = loss + cfg["w_constraint"] * diff_forward_x0_constraint(model, x_t, spatial_A_trans)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
