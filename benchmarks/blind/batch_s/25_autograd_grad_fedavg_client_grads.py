"""Hand-written FedSGD: each client computes its gradients with
torch.autograd.grad(loss, params) and applies a local step itself; the server
then averages client.model.fc.weight.grad to build the global update. Those
.grad fields are None because autograd.grad does not populate them."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "clients[0].model.fc.weight"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 2)

    def forward(self, x):
        return self.fc(x)


class Client:
    def __init__(self, state, x, y):
        self.model = Net()
        self.model.load_state_dict(state)
        self.x, self.y = x, y

    def compute_update(self, lr=0.1):
        params = list(self.model.parameters())
        loss = F.cross_entropy(self.model(self.x), self.y)
        grads = torch.autograd.grad(loss, params)  # <-- CUT
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= lr * g
        return loss


def server_aggregate(clients):
    gs = [c.model.fc.weight.grad for c in clients]
    return None if any(g is None for g in gs) else torch.stack(gs).mean(0)


def run():
    torch.manual_seed(0)
    global_model = Net()
    clients = [Client(global_model.state_dict(), torch.randn(6, 5), torch.randint(0, 2, (6,))) for _ in range(2)]
    losses = [c.compute_update() for c in clients]
    agg = server_aggregate(clients)
    return {"clients": clients, "global_model": global_model, "agg": agg, "losses": losses}
