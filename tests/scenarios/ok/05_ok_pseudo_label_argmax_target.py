"""Control: FixMatch-style pseudo-labelling. The pseudo-labels are the argmax of
the weakly-augmented predictions (detached) and a confidence mask is built with
a comparison; both are targets, and the model trains through the strong branch.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.03)
    u = torch.randn(12, 5)
    weak, strong = u + 0.01 * torch.randn_like(u), u + 0.3 * torch.randn_like(u)
    probs = F.softmax(model(weak).detach(), dim=1)
    conf, pseudo = probs.max(dim=1)
    mask = (conf >= 0.3).float()
    loss = (F.cross_entropy(model(strong), pseudo, reduction="none") * mask).mean()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
