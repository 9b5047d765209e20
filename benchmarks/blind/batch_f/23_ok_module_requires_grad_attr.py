"""Control from CSCYQJ/MICCAI23-ProtoContra-SFDA#18: source-free adaptation "freezes" the last
layer with `self.model.outc.requires_grad = False`. That sets a plain attribute on the module,
not on its parameters, so outc still trains; the user suspected the freeze and the gradient.
outc.conv.weight.grad is a normal nonzero gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.model.outc.conv.weight"
EXPECT = "grad_ok"


class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                                 nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())

    def forward(self, x):
        return self.net(x)


class OutConv(nn.Module):
    def __init__(self, cin, n_cls):
        super().__init__()
        self.conv = nn.Conv2d(cin, n_cls, 1)

    def forward(self, x):
        return self.conv(x)


class UNetLite(nn.Module):
    def __init__(self, n_cls=3):
        super().__init__()
        self.inc = DoubleConv(1, 8)
        self.down = nn.Sequential(nn.MaxPool2d(2), DoubleConv(8, 16))
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec = DoubleConv(16, 8)
        self.outc = OutConv(8, n_cls)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down(x1)
        x = self.dec(torch.cat([self.up(x2), x1], dim=1))
        return self.outc(x)


class ProtoAdapter:
    def __init__(self, model, prototypes):
        self.model = model
        self.prototypes = prototypes
        self.model.outc.requires_grad = False
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)

    def step(self, images):
        logits = self.model(images)
        probs = F.softmax(logits, dim=1)
        pseudo = probs.argmax(dim=1).detach()
        ent = -(probs * torch.log(probs + 1e-6)).sum(1).mean()
        loss = F.cross_entropy(logits, pseudo) + 0.1 * ent  # <-- CUT
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = ProtoAdapter(UNetLite(), prototypes=torch.randn(3, 8))
    images = torch.randn(2, 1, 8, 8)
    loss = trainer.step(images)
    return {"trainer": trainer, "loss": loss}
