"""Hypernetwork that emits one FiLM scale per layer of the main network from a
task embedding. The scales are unpacked with .tolist() to index them per layer,
so the main network trains but the hypernetwork gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.hyper[0].weight"
EXPECT = "grad_none"


class HyperFiLMNet(nn.Module):
    def __init__(self, n_tasks=3, n_layers=3, width=16):
        super().__init__()
        self.task_emb = nn.Embedding(n_tasks, 8)
        self.hyper = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, n_layers))
        self.inp = nn.Linear(6, width)
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers)])
        self.out = nn.Linear(width, 1)

    def forward(self, x, task_id):
        gammas = (1.0 + self.hyper(self.task_emb(task_id))).tolist()  # <-- CUT
        h = F.relu(self.inp(x))
        for g, layer in zip(gammas, self.layers):
            h = F.relu(layer(h) * g)
        return self.out(h)


def run():
    torch.manual_seed(0)
    model = HyperFiLMNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    task = torch.tensor(1)
    loss = F.mse_loss(model(x, task), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
