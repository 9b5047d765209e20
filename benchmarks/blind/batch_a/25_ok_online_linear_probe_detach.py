"""Control (vturrisi/solo-learn#135): an SSL method trains its online linear
classifier on feats.detach() while the backbone is trained by the SSL loss on
the un-detached features. detach() is not in-place, so only the classifier path
is cut: backbone[0].weight.grad is a normal nonzero gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.backbone[0].weight"
EXPECT = "grad_ok"


class BaseMethod(nn.Module):
    def __init__(self, n_classes=5, feat_dim=16, proj_dim=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, feat_dim))
        self.projector = nn.Sequential(nn.Linear(feat_dim, 16), nn.ReLU(), nn.Linear(16, proj_dim))
        self.classifier = nn.Linear(feat_dim, n_classes)

    def forward(self, x):
        feats = self.backbone(x)
        logits = self.classifier(feats.detach())
        return {"logits": logits, "feats": feats, "z": self.projector(feats)}


def simclr_loss(z1, z2, temperature=0.2):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T / temperature
    sim.fill_diagonal_(-1e9)
    n = z1.shape[0]
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


def training_step(model, opt, x1, x2, y):
    out1, out2 = model(x1), model(x2)
    class_loss = F.cross_entropy(out1["logits"], y)
    loss = simclr_loss(out1["z"], out2["z"]) + class_loss  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (out1["logits"].argmax(1) == y).float().mean().item()
    return loss, acc


def run():
    torch.manual_seed(0)
    model = BaseMethod()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(8, 20)
    x1, x2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    y = torch.randint(0, 5, (8,))
    loss, acc = training_step(model, opt, x1, x2, y)
    return {"model": model, "opt": opt, "loss": loss, "acc": acc}
