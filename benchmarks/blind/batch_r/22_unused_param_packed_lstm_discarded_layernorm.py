"""Sentiment classifier over packed sequences: after unpacking, the pooled features go
through `self.norm(feat)`, but the result is never assigned, so the classifier sees the
raw features. LayerNorm's weight and bias stay .grad None; everything else trains.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.norm.weight"
EXPECT = "grad_none"


class PackedSentiment(nn.Module):
    def __init__(self, vocab=40, d=10, h=12):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.lstm = nn.LSTM(d, h, batch_first=True, bidirectional=True)
        self.norm = nn.LayerNorm(2 * h)
        self.fc = nn.Linear(2 * h, 2)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.emb(tokens), lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        mask = (torch.arange(out.shape[1])[None, :] < lengths[:, None]).unsqueeze(-1).float()
        feat = (out * mask).sum(1) / lengths[:, None].float()
        self.norm(feat)  # <-- CUT
        return self.fc(feat)


def run():
    torch.manual_seed(0)
    model = PackedSentiment()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    lengths = torch.tensor([5, 3, 4])
    tokens = torch.randint(1, 40, (3, 5)) * (torch.arange(5)[None, :] < lengths[:, None])
    labels = torch.tensor([1, 0, 1])
    loss = F.cross_entropy(model(tokens, lengths), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
