"""BYOL-style learner (lucidrains byol-pytorch shape): the stop-gradient belongs on
the target projections, but the refactor put .detach() on the online predictions
while the target branch sits under no_grad anyway. The EMA update via .data and the
online linear probe on detached features are fine; nothing reaches the online encoder.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "learner.online_encoder[0].weight"
EXPECT = "grad_none"


def mlp(dim_in, dim_out, hidden=32):
    return nn.Sequential(nn.Linear(dim_in, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Linear(hidden, dim_out))


def loss_fn(x, y):
    return 2 - 2 * (F.normalize(x, dim=-1) * F.normalize(y, dim=-1)).sum(-1)


class BYOL(nn.Module):
    def __init__(self, moving_average_decay=0.99):
        super().__init__()
        self.online_encoder = mlp(10, 8)
        self.online_predictor = mlp(8, 8)
        self.target_encoder = mlp(10, 8)
        self.target_encoder.load_state_dict(self.online_encoder.state_dict())
        self.target_encoder.requires_grad_(False)
        self.beta = moving_average_decay
        self.probe = nn.Linear(8, 3)

    @torch.no_grad()
    def update_moving_average(self):
        for pt, po in zip(self.target_encoder.parameters(), self.online_encoder.parameters()):
            pt.data = pt.data * self.beta + (1 - self.beta) * po.data

    def forward(self, x, labels):
        one, two = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
        online_preds = self.online_predictor(self.online_encoder(torch.cat([one, two]))).detach()  # <-- CUT
        online_pred_one, online_pred_two = online_preds.chunk(2)
        with torch.no_grad():
            target_proj_one = self.target_encoder(one)
            target_proj_two = self.target_encoder(two)
        loss = loss_fn(online_pred_one, target_proj_two) + loss_fn(online_pred_two, target_proj_one)
        probe_loss = F.cross_entropy(self.probe(self.online_encoder(x).detach()), labels)
        return loss.mean() + probe_loss


def run():
    torch.manual_seed(0)
    learner = BYOL()
    opt = torch.optim.Adam([p for p in learner.parameters() if p.requires_grad], lr=3e-4)
    loss = learner(torch.randn(8, 10), torch.randint(0, 3, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    learner.update_moving_average()
    return {"learner": learner, "loss": loss}
