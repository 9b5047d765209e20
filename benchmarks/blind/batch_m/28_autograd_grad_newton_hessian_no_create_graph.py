"""Newton's method for logistic regression with a Hessian built row by row from the
gradient. The first torch.autograd.grad call omits create_graph=True, so the
gradient is a constant; differentiating its entries again raises "element 0 of
tensors does not require grad and does not have a grad_fn" inside autograd.grad.
"""
import torch

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class NewtonLogReg:
    def __init__(self, n_feat, l2=1e-2):
        self.theta = torch.zeros(n_feat, requires_grad=True)
        self.l2 = l2

    def loss(self, X, y):
        logits = X @ self.theta
        nll = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
        return nll + 0.5 * self.l2 * (self.theta ** 2).sum()

    def hessian(self, g):
        rows = [torch.autograd.grad(g[i], self.theta, retain_graph=True)[0] for i in range(g.numel())]
        return torch.stack(rows)

    def newton_step(self, X, y):
        loss = self.loss(X, y)
        g = torch.autograd.grad(loss, self.theta)[0]  # <-- CUT
        H = self.hessian(g)
        with torch.no_grad():
            self.theta -= torch.linalg.solve(H, g)
        return loss.item()


def run():
    torch.manual_seed(0)
    X = torch.randn(50, 3)
    y = (X[:, 0] - X[:, 1] > 0).float()
    model = NewtonLogReg(3)
    losses = [model.newton_step(X, y) for _ in range(2)]
    return {"model": model, "losses": losses}
