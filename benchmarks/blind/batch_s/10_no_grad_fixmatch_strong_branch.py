"""FixMatch-style step: pseudo-labels from the weak view are computed under
torch.no_grad() with a confidence threshold (a legitimate cut), but the strong
view's forward through the consistency adapter was put in the same block, so the
adapter never trains; the supervised loss still trains the backbone."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.adapter.weight"
EXPECT = "grad_none"


class SSLModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)
        self.adapter = nn.Linear(32, 32)

    def forward(self, x, adapt=False):
        h = self.backbone(x)
        if adapt:
            h = h + self.adapter(h)
        return self.head(h)


CFG = {"threshold": 0.3, "lambda_u": 1.0}


def run():
    torch.manual_seed(0)
    model = SSLModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
    x_l, y_l = torch.randn(8, 10), torch.randint(0, 4, (8,))
    x_u = torch.randn(16, 10)
    x_weak = x_u + 0.05 * torch.randn_like(x_u)
    x_strong = x_u + 0.5 * torch.randn_like(x_u)

    sup = F.cross_entropy(model(x_l), y_l)
    with torch.no_grad():
        probs = model(x_weak).softmax(1)
        conf, pseudo = probs.max(1)
        mask = (conf >= CFG["threshold"]).float()
        logits_s = model(x_strong, adapt=True)  # <-- CUT
    unsup = (F.cross_entropy(logits_s, pseudo, reduction="none") * mask).mean()
    loss = sup + CFG["lambda_u"] * unsup
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "mask": mask}
