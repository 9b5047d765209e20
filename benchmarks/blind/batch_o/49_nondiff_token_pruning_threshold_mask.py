"""Token pruning with a learnable keep-threshold: tokens whose saliency exceeds
thr are selected with a boolean mask, h[saliency > thr], and pooled. The
comparison has no gradient, so the encoder trains but thr.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.thr"
EXPECT = "grad_none"


class PrunedTokenClassifier(nn.Module):
    def __init__(self, vocab=40, dim=16, n_cls=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.saliency = nn.Linear(dim, 1)
        self.thr = nn.Parameter(torch.tensor(0.0))
        self.cls = nn.Linear(dim, n_cls)

    def forward(self, ids):
        h = self.embed(ids)
        s = self.saliency(h).squeeze(-1)
        pooled = []
        for b in range(h.shape[0]):
            keep = s[b] > self.thr  # <-- CUT
            kept = h[b][keep] * torch.sigmoid(s[b][keep]).unsqueeze(-1)
            pooled.append(kept.mean(0) if kept.shape[0] > 0 else h[b].mean(0))
        return self.cls(torch.stack(pooled))


def run():
    torch.manual_seed(0)
    model = PrunedTokenClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ids, y = torch.randint(0, 40, (4, 10)), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
