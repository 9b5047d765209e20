"""DANN domain adaptation with a hand-written gradient reversal layer. GradReverse.forward takes
(x, lambd), but backward returns only grad_output.neg() * ctx.lambd, one value for two inputs.
The label-classifier loss alone would be fine; the domain loss goes through the Function and
backward raises "function GradReverseBackward returned an incorrect number of gradients".
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class GradReverse(Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.lambd  # <-- CUT


class DANN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.label_clf = nn.Linear(32, 4)
        self.domain_clf = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x, lambd):
        f = self.features(x)
        return self.label_clf(f), self.domain_clf(GradReverse.apply(f, lambd))


def run():
    torch.manual_seed(0)
    model = DANN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xs, ys, xt = torch.randn(8, 10), torch.randint(0, 4, (8,)), torch.randn(8, 10)
    p = 0.1
    lambd = 2.0 / (1.0 + torch.exp(torch.tensor(-10.0 * p)).item()) - 1.0
    cls_s, dom_s = model(xs, lambd)
    _, dom_t = model(xt, lambd)
    loss = (F.cross_entropy(cls_s, ys)
            + F.binary_cross_entropy_with_logits(dom_s, torch.zeros(8, 1))
            + F.binary_cross_entropy_with_logits(dom_t, torch.ones(8, 1)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
