"""Tabular model with entity embeddings. Each step the trainer refits a
StandardScaler-style normaliser on the embedded features under torch.no_grad()
(fine for the statistics), but then feeds those same no-grad features to the head
instead of recomputing them, so the embedding tables never train.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embeds[0].weight"
EXPECT = "grad_none"

CONFIG = {"cardinalities": [7, 12, 5], "emb_dims": [4, 6, 3], "n_cont": 3, "lr": 3e-3}


class TorchStandardScaler:
    def fit(self, x):
        self.mean_ = x.mean(0, keepdim=True)
        self.scale_ = x.std(0, keepdim=True) + 1e-6
        return self

    def transform(self, x):
        return (x - self.mean_) / self.scale_


class EntityEmbeddingNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embeds = nn.ModuleList([nn.Embedding(c, d) for c, d in zip(cfg["cardinalities"], cfg["emb_dims"])])
        d_in = sum(cfg["emb_dims"]) + cfg["n_cont"]
        self.head = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, 1))

    def embed(self, x_cat, x_cont):
        embs = [e(x_cat[:, i]) for i, e in enumerate(self.embeds)]
        return torch.cat(embs + [x_cont], dim=1)


def run():
    torch.manual_seed(0)
    model = EntityEmbeddingNet(CONFIG)
    opt = torch.optim.Adam(model.parameters(), lr=CONFIG["lr"])
    scaler = TorchStandardScaler()
    x_cat = torch.stack([torch.randint(0, c, (64,)) for c in CONFIG["cardinalities"]], dim=1)
    x_cont = torch.randn(64, CONFIG["n_cont"]) * 5 + 2
    y = torch.randn(64, 1)
    with torch.no_grad():
        feats = model.embed(x_cat, x_cont)  # <-- CUT
        scaler.fit(feats)
    pred = model.head(scaler.transform(feats))
    loss = F.mse_loss(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
