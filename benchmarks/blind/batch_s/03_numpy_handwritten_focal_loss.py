"""Hand-written focal loss: the user computes (1-p)^gamma * -log(p) in numpy
"because torch.pow was slow" and wraps the result with torch.from_numpy(...)
.requires_grad_() so backward() does not complain. The classifier gets no grad."""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.classifier.weight"
EXPECT = "grad_none"


class FocalLoss:
    def __init__(self, gamma=2.0):
        self.gamma = gamma

    def __call__(self, logits, target):
        probs = torch.softmax(logits, dim=1)
        p = probs.detach().cpu().numpy()  # <-- CUT
        pt = p[np.arange(len(p)), target.numpy()]
        loss = np.mean(-((1.0 - pt) ** self.gamma) * np.log(pt + 1e-8))
        return torch.from_numpy(np.asarray(loss, dtype=np.float32)).requires_grad_()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 20), nn.ReLU())
        self.classifier = nn.Linear(20, 5)

    def forward(self, x):
        return self.classifier(self.features(x))


def run():
    torch.manual_seed(0)
    model = Model()
    crit = FocalLoss(gamma=2.0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(12, 10), torch.randint(0, 5, (12,))
    loss = crit(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "opt": opt}
