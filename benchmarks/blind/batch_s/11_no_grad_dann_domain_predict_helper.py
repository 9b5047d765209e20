"""DANN domain adaptation: features go through a gradient-reversal layer into a
domain classifier. The trainer reuses its @torch.no_grad() predict_domain()
helper (written for domain-accuracy logging) for the domain loss, so the domain
classifier never trains; the label loss still trains the feature extractor."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.domain_clf[0].weight"
EXPECT = "grad_none"


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return -ctx.lambd * g, None


class DANNTrainer:
    def __init__(self):
        self.features = nn.Sequential(nn.Linear(12, 24), nn.ReLU())
        self.label_clf = nn.Linear(24, 3)
        self.domain_clf = nn.Sequential(nn.Linear(24, 16), nn.ReLU(), nn.Linear(16, 1))
        mods = [self.features, self.label_clf, self.domain_clf]
        self.opt = torch.optim.SGD([p for m in mods for p in m.parameters()], lr=0.01)

    @torch.no_grad()
    def predict_domain(self, f, lambd):
        return self.domain_clf(GradReverse.apply(f, lambd)).squeeze(1)  # <-- CUT

    def step(self, xs, ys, xt, lambd=0.1):
        fs, ft = self.features(xs), self.features(xt)
        cls_loss = F.cross_entropy(self.label_clf(fs), ys)
        d_logits = torch.cat([self.predict_domain(fs, lambd), self.predict_domain(ft, lambd)])
        d_target = torch.cat([torch.zeros(len(xs)), torch.ones(len(xt))])
        dom_loss = F.binary_cross_entropy_with_logits(d_logits, d_target)
        loss = cls_loss + dom_loss
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    trainer = DANNTrainer()
    xs, ys = torch.randn(8, 12), torch.randint(0, 3, (8,))
    xt = torch.randn(8, 12) + 1.0
    loss = trainer.step(xs, ys, xt)
    return {"trainer": trainer, "loss": loss}
