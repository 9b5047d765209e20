"""Text classifier whose tokenizer maps unknown words to id 0, which is also the
Embedding's padding_idx. The vocabulary was built lower-cased but the batch is
not, so every token is 0: the embedding receives gradient only for the padding
row, which padding_idx zeroes, and embed.weight.grad is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embed.weight"
EXPECT = "grad_zero"

VOCAB = {"<pad>": 0, "the": 1, "movie": 2, "was": 3, "great": 4, "bad": 5, "plot": 6}


def encode(sentences, length=5):
    ids = [[VOCAB.get(w, 0) for w in s.split()][:length] for s in sentences]
    return torch.tensor([row + [0] * (length - len(row)) for row in ids])


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(len(VOCAB), 8, padding_idx=0)
        self.fc = nn.Linear(8, 2)

    def forward(self, ids):
        e = self.embed(ids)  # <-- CUT
        return self.fc(e.mean(dim=1))


def run():
    torch.manual_seed(0)
    model = BagClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ids = encode(["The Movie Was Great", "The Plot Was Bad", "Great Movie"])
    y = torch.tensor([1, 0, 1])
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
