"""Text classifier that keeps the padding row of its embedding fixed with a gradient hook
multiplying the grad by a row mask. The mask is built with `== pad_id` instead of `!=`, so
the hook keeps only the padding row's gradient, which is zero: the whole embedding grad is 0.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embedding.weight"
EXPECT = "grad_zero"


class Classifier(nn.Module):
    def __init__(self, vocab=30, d=8, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab, d)
        self.fc = nn.Linear(d, 2)
        keep = (torch.arange(vocab) == pad_id).float().unsqueeze(1)
        self.embedding.weight.register_hook(lambda g: self._mask_grad(g, keep))

    @staticmethod
    def _mask_grad(grad, keep):
        return grad * keep  # <-- CUT

    def forward(self, tokens):
        mask = (tokens != self.pad_id).float().unsqueeze(-1)
        pooled = (self.embedding(tokens) * mask).sum(1) / mask.sum(1)
        return self.fc(pooled)


def run():
    torch.manual_seed(0)
    model = Classifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.tensor([[3, 5, 8, 0], [9, 2, 0, 0], [4, 4, 6, 7]])
    labels = torch.tensor([0, 1, 1])
    loss = F.cross_entropy(model(tokens), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
