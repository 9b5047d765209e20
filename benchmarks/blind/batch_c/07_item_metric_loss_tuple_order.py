"""Deep metric learning trainer: the Weight loss returns (mean_pos_sim, mean_neg_sim,
prec, loss) with the statistics already turned into Python floats by .item(), but the
trainer unpacks `loss, inter_, dist_ap, dist_an`. The "loss" is a float, which the
user re-wraps with requires_grad=True to silence the error; the embedding never trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embed.weight"
EXPECT = "grad_none"


class EmbeddingNet(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
        self.embed = nn.Linear(64, dim)

    def forward(self, x):
        return F.normalize(self.embed(self.features(x)), dim=1)


class WeightLoss(nn.Module):
    def __init__(self, margin=0.5):
        super().__init__()
        self.margin = margin

    def forward(self, inputs, targets):
        sim = inputs @ inputs.t()
        same = targets.unsqueeze(0) == targets.unsqueeze(1)
        eye = torch.eye(len(targets), dtype=torch.bool)
        pos_sim = sim[same & ~eye]
        neg_sim = sim[~same]
        loss = F.relu(1.0 - pos_sim).mean() + F.relu(neg_sim - self.margin).mean()
        prec = (neg_sim < self.margin).float().mean().item()
        mean_pos_sim = pos_sim.mean().item()  # <-- CUT
        mean_neg_sim = neg_sim.mean().item()
        return mean_pos_sim, mean_neg_sim, prec, loss


def train_step(model, criterion, optimizer, inputs, labels):
    optimizer.zero_grad()
    embed_feat = model(inputs)
    loss, inter_, dist_ap, dist_an = criterion(embed_feat, labels)
    if not torch.is_tensor(loss):
        # 'float' object has no attribute 'backward'
        loss = torch.tensor(loss, requires_grad=True)
    loss.backward()
    optimizer.step()
    return loss, inter_, dist_ap, dist_an


def run():
    torch.manual_seed(0)
    model = EmbeddingNet()
    criterion = WeightLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    inputs = torch.randn(12, 32)
    labels = torch.arange(4).repeat_interleave(3)
    loss, inter_, dist_ap, dist_an = train_step(model, criterion, optimizer, inputs, labels)
    return {"model": model, "criterion": criterion, "optimizer": optimizer, "loss": loss}
