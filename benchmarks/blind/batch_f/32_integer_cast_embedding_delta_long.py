"""Reproduces BorealisAI/advertorch#81 ("How does PGDAttack deal with embedding?"): the model's
first layer is an nn.Embedding, so the PGD loop's `xvar + delta` has to be cast to LongTensor
before the forward. The cast is not differentiable; after loss.backward() the perturbation
has no gradient: delta.grad is None and the attack's `delta.grad.data.sign()` fails.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "delta"
EXPECT = "grad_none"


class TextCNN(nn.Module):
    def __init__(self, vocab=50, emb=16, n_cls=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.conv = nn.Conv1d(emb, 8, 3, padding=1)
        self.fc = nn.Linear(8, n_cls)

    def forward(self, tokens):
        h = self.embedding(tokens).transpose(1, 2)
        return self.fc(F.relu(self.conv(h)).max(dim=2).values)


def predict_from_float_ids(model, x_float, vocab=50):
    ids = x_float.clamp(0, vocab - 1).long()  # <-- CUT
    return model(ids)


def run():
    torch.manual_seed(0)
    model = TextCNN().eval()
    xvar = torch.randint(0, 50, (3, 7)).float()
    yvar = torch.tensor([0, 1, 1])
    delta = torch.zeros_like(xvar)
    delta.requires_grad_()
    outputs = predict_from_float_ids(model, xvar + delta)
    loss = F.cross_entropy(outputs, yvar)
    model.zero_grad()
    loss.backward()
    return {"delta": delta, "model": model, "loss": loss}
