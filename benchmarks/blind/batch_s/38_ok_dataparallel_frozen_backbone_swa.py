"""Control: a DataParallel-style wrapper on CPU (model.module...) fine-tunes only
the head; the pretrained backbone is frozen on purpose, and an SWA copy is filled
by load_state_dict and averaged under no_grad. The head's gradient is normal."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.module.head.weight"
EXPECT = "grad_ok"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 20), nn.ReLU())
        self.head = nn.Linear(20, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


class Wrapper(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, x):
        return self.module(x)


def run():
    torch.manual_seed(0)
    model = Wrapper(Net())
    for p in model.module.backbone.parameters():
        p.requires_grad = False
    swa = Net()
    swa.load_state_dict(model.module.state_dict())
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for ps, pm in zip(swa.parameters(), model.module.parameters()):
            ps.mul_(0.5).add_(0.5 * pm)
    return {"model": model, "swa": swa, "loss": loss}
