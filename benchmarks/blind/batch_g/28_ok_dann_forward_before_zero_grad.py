"""Control. DANN training step (Transfer-Learning-Library style): the model is run
and the classification + domain-adversarial losses are computed, and only then
optimizer.zero_grad(), loss.backward(), optimizer.step(). The user asked whether
computing the loss before zero_grad() breaks backward; it does not.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "classifier.backbone[0].weight"
EXPECT = "grad_ok"


class GradientReverseFunction(Function):
    @staticmethod
    def forward(ctx, input, coeff=1.0):
        ctx.coeff = coeff
        return input * 1.0

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.coeff, None


class DomainAdversarialLoss(nn.Module):
    def __init__(self, discriminator):
        super().__init__()
        self.discriminator = discriminator

    def forward(self, f_s, f_t, coeff=1.0):
        f = GradientReverseFunction.apply(torch.cat([f_s, f_t]), coeff)
        d = self.discriminator(f)
        d_label = torch.cat([torch.ones(f_s.shape[0], 1), torch.zeros(f_t.shape[0], 1)])
        return F.binary_cross_entropy_with_logits(d, d_label)


class ImageClassifier(nn.Module):
    def __init__(self, n_cls=5, d=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(20, d), nn.ReLU())
        self.bottleneck = nn.Sequential(nn.Linear(d, d), nn.ReLU())
        self.head = nn.Linear(d, n_cls)

    def forward(self, x):
        f = self.bottleneck(self.backbone(x))
        return self.head(f), f


def train_step(classifier, domain_adv, optimizer, x_s, labels_s, x_t, trade_off=1.0):
    x = torch.cat((x_s, x_t), dim=0)
    y, f = classifier(x)
    y_s, _ = y.chunk(2, dim=0)
    f_s, f_t = f.chunk(2, dim=0)
    cls_loss = F.cross_entropy(y_s, labels_s)
    transfer_loss = domain_adv(f_s, f_t)
    loss = cls_loss + transfer_loss * trade_off  # <-- CUT

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def run():
    torch.manual_seed(0)
    classifier = ImageClassifier()
    discriminator = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1))
    domain_adv = DomainAdversarialLoss(discriminator)
    optimizer = torch.optim.SGD(list(classifier.parameters()) + list(discriminator.parameters()),
                                lr=0.01, momentum=0.9, weight_decay=1e-3, nesterov=True)
    x_s, x_t = torch.randn(6, 20), torch.randn(6, 20)
    labels_s = torch.randint(0, 5, (6,))
    loss = train_step(classifier, domain_adv, optimizer, x_s, labels_s, x_t)
    return {"classifier": classifier, "loss": loss}
