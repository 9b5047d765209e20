"""MoCoSE-style sentence encoder: the offline (target) branch is stopped by setting
requires_grad = False on every module in non_optimizer_list, but the list names the
online pooler instead of the target pooler, so the online pooler never trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.pooler.dense.weight"
EXPECT = "grad_none"


class Pooler(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.dense = nn.Linear(dim, dim)

    def forward(self, h):
        return torch.tanh(self.dense(h[:, 0]))


class MoCoSE(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Embedding(vocab, dim), nn.Linear(dim, dim), nn.GELU())
        self.pooler = Pooler(dim)
        self.target_encoder = nn.Sequential(nn.Embedding(vocab, dim), nn.Linear(dim, dim), nn.GELU())
        self.target_pooler = Pooler(dim)
        self.target_encoder.load_state_dict(self.encoder.state_dict())
        self.target_pooler.load_state_dict(self.pooler.state_dict())
        self.predictor = nn.Linear(dim, dim)

    def forward(self, ids):
        q = self.predictor(self.pooler(self.encoder(ids)))
        with torch.no_grad():
            k = self.target_pooler(self.target_encoder(ids))
        return q, k


def run():
    torch.manual_seed(0)
    model = MoCoSE()
    non_optimizer_list = [model.target_encoder, model.pooler]
    for layer in non_optimizer_list:
        for para in layer.parameters():
            para.requires_grad = False  # <-- CUT
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=3e-5)
    ids = torch.randint(0, 50, (4, 7))
    q, k = model(ids)
    logits = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).T / 0.05
    loss = F.cross_entropy(logits, torch.arange(4))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
