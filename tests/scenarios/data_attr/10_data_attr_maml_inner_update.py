"""MAML whose inner (adaptation) loop builds the adapted weights from param.data
(KanishJebaMathewM/Truxify#13118: "param.data -= ... detaches the graph - the
meta-model never trains"). With first-order inner gradients the query loss has
no path back to the meta parameters at all, and meta_loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class DemandNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x, weights=None):
        if weights is None:
            return self.net(x)
        h = F.relu(F.linear(x, weights[0], weights[1]))
        return F.linear(h, weights[2], weights[3])


class MAML:
    def __init__(self, model, inner_lr=0.01, outer_lr=1e-3):
        self.model = model
        self.inner_lr = inner_lr
        self.criterion = nn.MSELoss()
        self.meta_optimizer = torch.optim.Adam(model.parameters(), lr=outer_lr)

    def inner_update(self, support_x, support_y):
        params = list(self.model.parameters())
        loss = self.criterion(self.model(support_x), support_y)
        grads = torch.autograd.grad(loss, params)  # first-order MAML
        adapted = [param.data - self.inner_lr * grad for param, grad in zip(params, grads)]  # <-- CUT
        return adapted

    def meta_train_step(self, tasks):
        meta_loss = 0.0
        for support_x, support_y, query_x, query_y in tasks:
            adapted = self.inner_update(support_x, support_y)
            pred = self.model(query_x, weights=adapted)
            meta_loss = meta_loss + self.criterion(pred, query_y)
        self.meta_optimizer.zero_grad()
        meta_loss.backward()
        self.meta_optimizer.step()
        return meta_loss


def run():
    torch.manual_seed(0)
    maml = MAML(DemandNet())
    tasks = [(torch.randn(8, 5), torch.randn(8, 1), torch.randn(8, 5), torch.randn(8, 1)) for _ in range(2)]
    meta_loss = maml.meta_train_step(tasks)
    return {"maml": maml, "meta_loss": meta_loss}
