"""Token attribution for a padded text classifier with a hand-written embedding lookup:
the model stores the masked embeddings as `self.last_emb` and the user reads
`model.last_emb.grad` after backward. It is a non-leaf without retain_grad, so it is None.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.last_emb"
EXPECT = "grad_none"


class MaskedCNNClassifier(nn.Module):
    def __init__(self, vocab=30, d=8, n_cls=2, pad=0):
        super().__init__()
        self.pad = pad
        self.table = nn.Parameter(torch.randn(vocab, d) * 0.3)
        self.conv = nn.Conv1d(d, 8, 3, padding=1)
        self.fc = nn.Linear(8, n_cls)
        self.last_emb = None

    def forward(self, tokens):
        mask = (tokens != self.pad).unsqueeze(-1).float()
        self.last_emb = self.table[tokens] * mask  # <-- CUT
        h = F.relu(self.conv(self.last_emb.transpose(1, 2)))
        h = h.masked_fill(mask.transpose(1, 2) == 0, -1e4).max(-1).values
        return self.fc(h)


def run():
    torch.manual_seed(0)
    model = MaskedCNNClassifier()
    tokens = torch.tensor([[4, 9, 12, 3, 0, 0], [7, 7, 2, 5, 8, 1]])
    labels = torch.tensor([1, 0])
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    return {"model": model, "loss": loss, "tokens": tokens}
