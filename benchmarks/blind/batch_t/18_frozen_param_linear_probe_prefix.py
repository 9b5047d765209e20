"""Linear evaluation of a pretrained SSL model: everything not named 'head.*' is frozen on purpose,
but the new classifier was registered as `fc`, so it is frozen too and gets no grad.
Thread: linear probe on SimCLR features, classifier grad None (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "frozen_param"
QUERY = 'model.fc.weight'
EXPECT = "grad_none"

class SSLModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32))
        self.head = nn.Linear(32, 32)
        self.fc = nn.Linear(32, 4)
    def forward(self, x):
        return self.fc(torch.relu(self.head(self.backbone(x))))

def run():
    torch.manual_seed(0)
    model = SSLModel()
    for name, p in model.named_parameters():
        if not name.startswith("head"):
            p.requires_grad = False  # <-- CUT
    opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    return {"model": model}
