"""Control (timm-style fine-tune): the pretrained backbone is frozen on purpose (linear-probe
warm-up), a ModelEmaV2-like copy is updated under no_grad through `.data`, the model_ema is used
for validation under no_grad, and accuracy is logged with `.item()`. The new head trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head.weight"
EXPECT = "grad_ok"


class ModelEmaV2(nn.Module):
    def __init__(self, model, decay=0.9998):
        super().__init__()
        self.module = type(model)()
        self.module.load_state_dict(model.state_dict())
        self.module.requires_grad_(False)
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        for e, m in zip(self.module.state_dict().values(), model.state_dict().values()):
            e.data.copy_(self.decay * e.data + (1.0 - self.decay) * m.data)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        return self.head(self.backbone(x).mean((2, 3)))


def run():
    torch.manual_seed(0)
    model = Net()
    for p in model.backbone.parameters():
        p.requires_grad = False
    model_ema = ModelEmaV2(model)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    x, y = torch.randn(8, 3, 8, 8), torch.randint(0, 5, (8,))
    logits = model(x)
    loss = F.cross_entropy(logits, y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    model_ema.update(model)
    with torch.no_grad():
        val_acc = (model_ema.module(x).argmax(-1) == y).float().mean().item()
    return {"model": model, "model_ema": model_ema, "loss": loss, "val_acc": val_acc}
