"""MAML meta-learner (dragen1860 style) run with update_step=1. The query loss after
the first inner update is computed under torch.no_grad() "for logging", and the loop
that would recompute it with grad, range(1, update_step), is empty. losses_q[-1] is
therefore the no-grad value and loss_q.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Learner(nn.Module):
    def __init__(self, n_in=8, n_way=3):
        super().__init__()
        self.vars = nn.ParameterList([
            nn.Parameter(torch.randn(32, n_in) * 0.1), nn.Parameter(torch.zeros(32)),
            nn.Parameter(torch.randn(n_way, 32) * 0.1), nn.Parameter(torch.zeros(n_way)),
        ])

    def forward(self, x, vars=None):
        w1, b1, w2, b2 = self.vars if vars is None else vars
        return F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)

    def parameters(self, recurse=True):
        return self.vars


class Meta(nn.Module):
    def __init__(self, update_lr=0.4, meta_lr=1e-3, update_step=1):
        super().__init__()
        self.update_lr = update_lr
        self.update_step = update_step
        self.net = Learner()
        self.meta_optim = torch.optim.Adam(self.net.parameters(), lr=meta_lr)

    def forward(self, x_spt, y_spt, x_qry, y_qry):
        task_num = x_spt.size(0)
        losses_q = [0 for _ in range(self.update_step + 1)]
        for i in range(task_num):
            logits = self.net(x_spt[i])
            loss = F.cross_entropy(logits, y_spt[i])
            grad = torch.autograd.grad(loss, self.net.parameters())
            fast_weights = [p - self.update_lr * g for g, p in zip(grad, self.net.parameters())]
            # this is the loss and accuracy before first update
            with torch.no_grad():
                loss_q = F.cross_entropy(self.net(x_qry[i], self.net.parameters()), y_qry[i])
                losses_q[0] += loss_q
            # this is the loss and accuracy after the first update
            with torch.no_grad():
                loss_q = F.cross_entropy(self.net(x_qry[i], fast_weights), y_qry[i])  # <-- CUT
                losses_q[1] += loss_q
            for k in range(1, self.update_step):
                logits = self.net(x_spt[i], fast_weights)
                grad = torch.autograd.grad(F.cross_entropy(logits, y_spt[i]), fast_weights)
                fast_weights = [p - self.update_lr * g for g, p in zip(grad, fast_weights)]
                losses_q[k + 1] += F.cross_entropy(self.net(x_qry[i], fast_weights), y_qry[i])
        loss_q = losses_q[-1] / task_num
        self.meta_optim.zero_grad()
        loss_q.backward()
        self.meta_optim.step()
        return loss_q


def run():
    torch.manual_seed(0)
    maml = Meta(update_step=1)
    x_spt, y_spt = torch.randn(2, 6, 8), torch.randint(0, 3, (2, 6))
    x_qry, y_qry = torch.randn(2, 9, 8), torch.randint(0, 3, (2, 9))
    loss_q = maml(x_spt, y_spt, x_qry, y_qry)
    return {"maml": maml, "loss_q": loss_q}
