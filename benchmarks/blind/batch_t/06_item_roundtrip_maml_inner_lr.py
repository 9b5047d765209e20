"""Meta-SGD style MAML with a learnable inner learning rate turned into a float with float().
The inner loop uses autograd.grad(create_graph=True) correctly; the inner lr never gets a grad.
Thread: learnable inner-loop lr in MAML not updating (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "item_roundtrip"
QUERY = 'learner.inner_lr'
EXPECT = "grad_none"

class MetaLearner(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(1, 5) * 0.1)
        self.b = nn.Parameter(torch.zeros(1))
        self.inner_lr = nn.Parameter(torch.tensor(0.05))
    def functional(self, x, w, b):
        return F.linear(x, w, b)
    def adapt(self, xs, ys, steps=2):
        w, b = self.w, self.b
        lr = float(self.inner_lr)  # <-- CUT
        for _ in range(steps):
            loss = F.mse_loss(self.functional(xs, w, b), ys)
            gw, gb = torch.autograd.grad(loss, (w, b), create_graph=True)
            w, b = w - lr * gw, b - lr * gb
        return w, b

def run():
    torch.manual_seed(0)
    learner = MetaLearner()
    meta_opt = torch.optim.Adam(learner.parameters(), 1e-3)
    meta_loss = 0.0
    for t in range(3):
        xs, xq = torch.randn(5, 5), torch.randn(5, 5)
        coef = torch.randn(5, 1)
        w, b = learner.adapt(xs, xs @ coef)
        meta_loss = meta_loss + F.mse_loss(learner.functional(xq, w, b), xq @ coef)
    meta_opt.zero_grad(); meta_loss.backward(); meta_opt.step()
    return {"learner": learner}
