"""Text classifier that caches token embeddings for a fixed vocabulary under
torch.inference_mode() to speed up training, and .clone()s them (as the
"Inference tensors cannot be saved for backward" message suggests). The encoder
and classifier train, but the embedding table does not: model.embed.weight.grad is None.
Thread: SO, "Inference tensors cannot be saved for backward" (recalled).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embed.weight"
EXPECT = "grad_none"


class TextClassifier(nn.Module):
    def __init__(self, vocab=50, d=16, n_cls=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.encoder = nn.Sequential(nn.Linear(d, d), nn.Tanh())
        self.cls = nn.Linear(d, n_cls)
        self._table = None

    def build_cache(self):
        with torch.inference_mode():
            self._table = self.embed.weight * 1.0  # <-- CUT

    def forward(self, tokens):
        if self._table is None:
            self.build_cache()
        e = F.embedding(tokens, self._table.clone())
        return self.cls(self.encoder(e).mean(1))


def run():
    torch.manual_seed(0)
    model = TextClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 50, (8, 6))
    y = torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(tokens), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
