"""Text classifier with attention pooling and a padding mask filled with -inf. One example in
the batch is empty after cleaning (all padding), so its whole score row is -inf, softmax
gives NaN, and the NaN pooled vector reaches the classifier: fc.weight.grad contains NaN.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc.weight"
EXPECT = "grad_nonfinite"


class AttnPoolClassifier(nn.Module):
    def __init__(self, vocab=30, d=8, pad=0):
        super().__init__()
        self.pad = pad
        self.embed = nn.Embedding(vocab, d, padding_idx=pad)
        self.query = nn.Parameter(torch.randn(d))
        self.fc = nn.Linear(d, 2)

    def forward(self, tokens):
        h = self.embed(tokens)
        scores = h @ self.query
        scores = scores.masked_fill(tokens == self.pad, float("-inf"))  # <-- CUT
        attn = torch.softmax(scores, dim=1)
        pooled = (attn.unsqueeze(-1) * h).sum(1)
        return self.fc(pooled)


def run():
    torch.manual_seed(0)
    model = AttnPoolClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.tensor([[5, 9, 2, 0], [0, 0, 0, 0], [7, 3, 0, 0]])
    labels = torch.tensor([1, 0, 1])
    loss = F.cross_entropy(model(tokens), labels)
    opt.zero_grad()
    loss.backward()
    return {"model": model, "opt": opt, "loss": loss}
