"""Domain-adaptation feature extractor: after the shared encoder the user calls
self.norm(h) to normalise features before the domain/label heads, but never
assigns the result. The LayerNorm gets no gradient; everything else trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.extractor.norm.weight"
EXPECT = "grad_none"


class Extractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(10, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        h = F.relu(self.enc(x))
        self.norm(h)  # <-- CUT
        return h


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.extractor = Extractor()
        self.label_head = nn.Linear(16, 3)
        self.domain_head = nn.Linear(16, 1)


def run():
    torch.manual_seed(0)
    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xs, ys, xt = torch.randn(6, 10), torch.randint(0, 3, (6,)), torch.randn(6, 10)
    fs, ft = model.extractor(xs), model.extractor(xt)
    d = model.domain_head(torch.cat([fs, ft])).squeeze(1)
    loss = F.cross_entropy(model.label_head(fs), ys) + F.binary_cross_entropy_with_logits(
        d, torch.cat([torch.zeros(6), torch.ones(6)]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
