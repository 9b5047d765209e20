"""FedAvg with server-side distillation: the server computes a distillation loss
of the global model on proxy data, then aggregates the client weights into the
global model with load_state_dict (an in-place copy) before calling backward.
The copy bumps the versions of weights saved by the loss, so backward raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def make():
    return nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))


class Server:
    def __init__(self, clients):
        self.global_model = make()
        self.clients = clients
        self.opt = torch.optim.SGD(self.global_model.parameters(), lr=0.01)

    def round(self, proxy_x):
        with torch.no_grad():
            teacher = torch.stack([c(proxy_x).softmax(1) for c in self.clients]).mean(0)
        kd = F.kl_div(self.global_model(proxy_x).log_softmax(1), teacher, reduction="batchmean")
        states = [c.state_dict() for c in self.clients]
        avg = {k: sum(s[k] for s in states) / len(states) for k in states[0]}
        self.global_model.load_state_dict(avg)  # <-- CUT
        self.opt.zero_grad()
        kd.backward()
        self.opt.step()
        return kd


def run():
    torch.manual_seed(0)
    clients = [make() for _ in range(3)]
    server = Server(clients)
    kd = server.round(torch.randn(10, 6))
    return {"server": server, "kd": kd}
