"""The concern in vturrisi/solo-learn#135 made real: a re-implementation writes
feats = feats.detach() (rebinding) before the online linear classifier instead
of passing feats.detach() to it, so the SSL projector also sees detached features
and the backbone never trains: model.backbone[0].weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.backbone[0].weight"
EXPECT = "grad_none"


class BYOLMethod(nn.Module):
    def __init__(self, n_classes=5, feat_dim=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, feat_dim))
        self.projector = nn.Sequential(nn.Linear(feat_dim, 16), nn.ReLU(), nn.Linear(16, 8))
        self.predictor = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
        self.classifier = nn.Linear(feat_dim, n_classes)

    def forward(self, x):
        feats = self.backbone(x)
        feats = feats.detach()  # <-- CUT
        logits = self.classifier(feats)
        z = self.projector(feats)
        return {"logits": logits, "z": z, "p": self.predictor(z)}


def byol_loss(p, z):
    return 2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1).mean()


def run():
    torch.manual_seed(0)
    model = BYOLMethod()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(8, 20)
    x1, x2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    y = torch.randint(0, 5, (8,))
    out1, out2 = model(x1), model(x2)
    loss = byol_loss(out1["p"], out2["z"]) + byol_loss(out2["p"], out1["z"]) + F.cross_entropy(out1["logits"], y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
