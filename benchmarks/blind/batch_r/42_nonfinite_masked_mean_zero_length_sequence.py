"""Text classifier with a hand-written embedding table and masked mean pooling
`(emb * mask).sum(1) / mask.sum(1)`. A review that is empty after tokenisation has length 0,
so its pooled vector is 0/0 = NaN and the classifier weight's gradient is NaN.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc.weight"
EXPECT = "grad_nonfinite"


class MeanPoolClassifier(nn.Module):
    def __init__(self, vocab=30, d=8, pad=0):
        super().__init__()
        self.pad = pad
        self.table = nn.Parameter(torch.randn(vocab, d) * 0.1)
        self.fc = nn.Linear(d, 2)

    def forward(self, tokens):
        mask = (tokens != self.pad).float().unsqueeze(-1)
        emb = self.table[tokens] * mask
        pooled = emb.sum(1) / mask.sum(1)  # <-- CUT
        return self.fc(pooled)


def collate(batch, max_len=5, pad=0):
    out = torch.full((len(batch), max_len), pad, dtype=torch.long)
    for i, seq in enumerate(batch):
        out[i, :len(seq)] = torch.tensor(seq[:max_len], dtype=torch.long)
    return out


def run():
    torch.manual_seed(0)
    model = MeanPoolClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = collate([[3, 7, 9], [], [5, 2, 8, 8, 1]])
    labels = torch.tensor([1, 0, 1])
    loss = F.cross_entropy(model(tokens), labels)
    opt.zero_grad()
    loss.backward()
    return {"model": model, "opt": opt, "loss": loss}
