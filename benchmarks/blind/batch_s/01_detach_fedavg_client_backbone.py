"""Hand-written FedAvg: each Client trains a local copy of the global model and
the server averages the state_dicts. The client's forward detaches the backbone
features (left over from a linear-probe experiment), so only the head trains and
the averaged backbone never moves."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "clients[0].model.backbone[0].weight"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)


class Client:
    def __init__(self, global_model, x, y, lr=0.1):
        self.model = Net()
        self.model.load_state_dict(global_model.state_dict())
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr)
        self.x, self.y = x, y

    def local_step(self):
        feats = self.model.backbone(self.x).detach()  # <-- CUT
        loss = F.cross_entropy(self.model.head(feats), self.y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def fedavg(global_model, clients):
    states = [c.model.state_dict() for c in clients]
    avg = {k: sum(s[k] for s in states) / len(states) for k in states[0]}
    global_model.load_state_dict(avg)


def run():
    torch.manual_seed(0)
    global_model = Net()
    clients = [Client(global_model, torch.randn(10, 8), torch.randint(0, 3, (10,))) for _ in range(3)]
    losses = [c.local_step() for c in clients]
    fedavg(global_model, clients)
    return {"global_model": global_model, "clients": clients, "losses": losses}
