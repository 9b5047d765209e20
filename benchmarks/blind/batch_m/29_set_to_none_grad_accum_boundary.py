"""Fine-tuning loop with gradient accumulation over 4 micro-batches. At each
accumulation boundary the user calls `optimizer.zero_grad()` first "to start the
next window clean", then clips and steps, so every step sees None gradients; the
clip helper silently reports norm 0 and the classifier never updates.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.classifier.weight"
EXPECT = "grad_none"

CONFIG = {"accum_steps": 4, "max_grad_norm": 1.0, "lr": 3e-4}


class TextClassifier(nn.Module):
    def __init__(self, vocab=200, d=32, n_cls=4):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, d, mode="mean")
        self.proj = nn.Sequential(nn.Linear(d, d), nn.GELU())
        self.classifier = nn.Linear(d, n_cls)

    def forward(self, ids):
        return self.classifier(self.proj(self.embed(ids)))


def train(model, batches, cfg):
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    norms = []
    for i, (ids, y) in enumerate(batches):
        loss = F.cross_entropy(model(ids), y) / cfg["accum_steps"]
        loss.backward()
        if (i + 1) % cfg["accum_steps"] == 0:
            opt.zero_grad()  # <-- CUT
            norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["max_grad_norm"])))
            opt.step()
    return opt, norms


def run():
    torch.manual_seed(0)
    model = TextClassifier()
    batches = [(torch.randint(0, 200, (8, 12)), torch.randint(0, 4, (8,))) for _ in range(8)]
    opt, norms = train(model, batches, CONFIG)
    return {"model": model, "opt": opt, "norms": norms}
