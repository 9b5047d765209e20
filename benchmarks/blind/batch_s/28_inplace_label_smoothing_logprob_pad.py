"""Hand-written label-smoothing loss for a tagger: after log_softmax the user
zeroes the padding class column in place (logp[:, pad] = 0) so smoothing mass
does not go there. log_softmax saved its output for backward, so backward()
raises "modified by an inplace operation"."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class LabelSmoothingLoss(nn.Module):
    def __init__(self, n_cls, pad_idx=0, eps=0.1):
        super().__init__()
        self.n_cls, self.pad, self.eps = n_cls, pad_idx, eps

    def forward(self, logits, target):
        logp = F.log_softmax(logits, dim=-1)
        logp[:, self.pad] = 0.0  # <-- CUT
        smooth = torch.full_like(logp, self.eps / (self.n_cls - 2))
        smooth[:, self.pad] = 0.0
        smooth.scatter_(1, target.unsqueeze(1), 1.0 - self.eps)
        return -(smooth * logp).sum(1).mean()


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(20, 8), nn.Linear(8, 6))
    crit = LabelSmoothingLoss(6)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 20, (12,))
    target = torch.randint(1, 6, (12,))
    loss = crit(model(tokens), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
