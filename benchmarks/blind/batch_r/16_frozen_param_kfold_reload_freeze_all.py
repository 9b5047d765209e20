"""Transfer learning inside a k-fold loop: each fold reloads the pretrained backbone into a
new model and freezes it. The freeze loop runs over model.parameters() after the new head
is attached, so the head is frozen too and backward raises (nothing requires grad).
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Net(nn.Module):
    def __init__(self, n_cls):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU())
        self.head = nn.Linear(12, n_cls)

    def forward(self, x):
        return self.head(self.backbone(x))


def make_fold_model(pretrained_backbone_state, n_cls=3):
    model = Net(n_cls)
    model.backbone.load_state_dict(pretrained_backbone_state)
    for p in model.parameters():
        p.requires_grad = False  # <-- CUT
    return model


def run():
    torch.manual_seed(0)
    pretrained = Net(5).backbone.state_dict()
    x = torch.randn(24, 6)
    y = torch.randint(0, 3, (24,))
    folds = torch.arange(24).chunk(3)
    scores = []
    for k, va in enumerate(folds):
        tr = torch.cat([f for j, f in enumerate(folds) if j != k])
        model = make_fold_model(pretrained)
        opt = torch.optim.Adam(model.head.parameters(), lr=1e-3)
        loss = F.cross_entropy(model(x[tr]), y[tr])
        opt.zero_grad()
        loss.backward()
        opt.step()
        scores.append(loss.item())
    return {"scores": scores}
