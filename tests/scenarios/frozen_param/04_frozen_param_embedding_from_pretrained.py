"""GloVe-style vectors are loaded with nn.Embedding.from_pretrained(vectors),
which freezes the weight by default (freeze=True). The user meant to fine-tune
them; embedding.weight.grad is None while the classifier trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.emb.weight"
EXPECT = "grad_none"


class Classifier(nn.Module):
    def __init__(self, vectors, n_cls=3):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(vectors)  # <-- CUT
        self.fc = nn.Linear(vectors.shape[1], n_cls)

    def forward(self, ids):
        return self.fc(self.emb(ids).mean(1))


def run():
    torch.manual_seed(0)
    vectors = torch.randn(30, 10)
    model = Classifier(vectors)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 30, (4, 7))
    y = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
