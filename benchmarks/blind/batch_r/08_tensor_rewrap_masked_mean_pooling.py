"""Text classifier with a hand-written embedding table and a padding mask: the masked mean
pooling is computed, then copied with torch.tensor(pooled) "to get a fresh float tensor" for
the classifier. The classifier trains; the embedding table keeps .grad None.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.emb_table"
EXPECT = "grad_none"


class BagClassifier(nn.Module):
    def __init__(self, vocab=30, d=8, n_cls=3, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.emb_table = nn.Parameter(torch.randn(vocab, d) * 0.1)
        self.fc = nn.Linear(d, n_cls)

    def pool(self, tokens):
        mask = (tokens != self.pad_id).float().unsqueeze(-1)
        emb = self.emb_table[tokens] * mask
        return emb.sum(1) / mask.sum(1).clamp(min=1.0)

    def forward(self, tokens):
        pooled = self.pool(tokens)
        feats = torch.tensor(pooled, dtype=torch.float32)  # <-- CUT
        return self.fc(feats)


def run():
    torch.manual_seed(0)
    model = BagClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    tokens = torch.tensor([[5, 7, 9, 0, 0], [3, 4, 0, 0, 0], [8, 2, 6, 1, 11]])
    labels = torch.tensor([0, 2, 1])
    loss = F.cross_entropy(model(tokens), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
