"""Logistic regression trained with a hand-written Adam (moments in a dict, update under
torch.no_grad). The bias is created with requires_grad=True but the weight matrix was
created without it, so W.grad stays None and the optimizer silently skips it.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "W"
EXPECT = "grad_none"


class ManualAdam:
    def __init__(self, params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.lr, self.betas, self.eps = list(params), lr, betas, eps
        self.state = {id(p): (torch.zeros_like(p), torch.zeros_like(p)) for p in self.params}
        self.t = 0

    @torch.no_grad()
    def step(self):
        self.t += 1
        b1, b2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            m, v = self.state[id(p)]
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            m_hat, v_hat = m / (1 - b1 ** self.t), v / (1 - b2 ** self.t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        for p in self.params:
            p.grad = None


def run():
    torch.manual_seed(0)
    X = torch.randn(40, 5)
    y = (X[:, 0] - X[:, 1] > 0).float()
    W = torch.randn(5, 1) * 0.1  # <-- CUT
    b = torch.zeros(1, requires_grad=True)
    opt = ManualAdam([W, b])
    logits = (X @ W).squeeze(1) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"W": W, "b": b, "opt": opt, "loss": loss}
