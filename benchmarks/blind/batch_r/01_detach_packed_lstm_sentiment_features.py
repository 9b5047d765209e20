"""Sentiment LSTM over packed sequences. The final hidden state is detached before the
classifier (left over from a feature-caching experiment), so only the classifier learns:
the embedding and LSTM weights keep .grad None although the loss goes down.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embedding.weight"
EXPECT = "grad_none"

CONFIG = {"vocab": 50, "emb": 12, "hidden": 16, "classes": 2, "pad": 0}


class SentimentLSTM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embedding = nn.Embedding(cfg["vocab"], cfg["emb"], padding_idx=cfg["pad"])
        self.lstm = nn.LSTM(cfg["emb"], cfg["hidden"], batch_first=True)
        self.classifier = nn.Linear(cfg["hidden"], cfg["classes"])

    def encode(self, tokens, lengths):
        emb = self.embedding(tokens)
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        _, (h_n, _) = self.lstm(packed)
        return h_n[-1]

    def forward(self, tokens, lengths):
        feats = self.encode(tokens, lengths)
        feats = feats.detach()  # <-- CUT
        return self.classifier(feats)


def make_batch(g):
    lengths = torch.tensor([7, 5, 3, 6])
    tokens = torch.zeros(4, 7, dtype=torch.long)
    for i, n in enumerate(lengths.tolist()):
        tokens[i, :n] = torch.randint(1, CONFIG["vocab"], (n,), generator=g)
    labels = torch.tensor([1, 0, 1, 0])
    return tokens, lengths, labels


def run():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = SentimentLSTM(CONFIG)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, lengths, labels = make_batch(g)
    logits = model(tokens, lengths)
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss, "tokens": tokens}
