"""Meta-SGD on sine regression: the inner-loop learning rate is a learnable log_lr Parameter in
the meta-optimizer. The adapt() helper turns it into a Python float with .item() before the
fast-weight update, so the query loss reaches the initial weights (second-order, create_graph)
but log_lr.grad stays None and the step size never learns.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "learner.log_lr"
EXPECT = "grad_none"


class MetaSGDLearner(torch.nn.Module):
    def __init__(self, hidden=40):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(hidden, 1) * 0.5)
        self.b1 = torch.nn.Parameter(torch.zeros(hidden))
        self.w2 = torch.nn.Parameter(torch.randn(1, hidden) * 0.1)
        self.b2 = torch.nn.Parameter(torch.zeros(1))
        self.log_lr = torch.nn.Parameter(torch.tensor(-2.0))

    def weights(self):
        return [self.w1, self.b1, self.w2, self.b2]

    @staticmethod
    def functional_forward(x, params):
        w1, b1, w2, b2 = params
        return F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)

    def adapt(self, x_s, y_s, params, steps=2):
        for _ in range(steps):
            loss = F.mse_loss(self.functional_forward(x_s, params), y_s)
            grads = torch.autograd.grad(loss, params, create_graph=True)
            lr = self.log_lr.exp().item()  # <-- CUT
            params = [p - lr * g for p, g in zip(params, grads)]
        return params


def sample_task(n=10):
    amp, phase = torch.rand(1) * 4 + 0.1, torch.rand(1) * 3.14
    x = torch.rand(2 * n, 1) * 10 - 5
    y = amp * torch.sin(x + phase)
    return x[:n], y[:n], x[n:], y[n:]


def run():
    torch.manual_seed(0)
    learner = MetaSGDLearner()
    meta_opt = torch.optim.Adam(learner.parameters(), lr=1e-3)
    meta_opt.zero_grad()
    meta_loss = 0.0
    for _ in range(3):
        x_s, y_s, x_q, y_q = sample_task()
        fast = learner.adapt(x_s, y_s, learner.weights())
        meta_loss = meta_loss + F.mse_loss(learner.functional_forward(x_q, fast), y_q)
    meta_loss.backward()
    meta_opt.step()
    return {"learner": learner, "meta_loss": meta_loss}
