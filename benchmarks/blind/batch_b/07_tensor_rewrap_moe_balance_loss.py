"""FastMoE Megatron balance loss (laekov/fastmoe#49): per-layer balance losses
are collected in loss_list and combined with torch.tensor(loss_list), which
"will remove the grad_fn of each loss". With hard top-1 dispatch the gate is
trained only by that loss, so moe.gate.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layers[0].gate.weight"
EXPECT = "grad_none"


class MoELayer(nn.Module):
    def __init__(self, d=16, n_experts=4):
        super().__init__()
        self.gate = nn.Linear(d, n_experts, bias=False)
        self.experts = nn.ModuleList(nn.Linear(d, d) for _ in range(n_experts))
        self.n_experts = n_experts
        self.balance_loss = None

    def forward(self, x):
        probs = torch.softmax(self.gate(x), dim=-1)
        top1 = probs.argmax(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            sel = top1 == e
            if sel.any():
                out[sel] = expert(x[sel])
        frac = F.one_hot(top1, self.n_experts).float().mean(0)
        self.balance_loss = self.n_experts * (frac * probs.mean(0)).sum()
        return x + out


class Model(nn.Module):
    def __init__(self, n_layers=2):
        super().__init__()
        self.layers = nn.ModuleList(MoELayer() for _ in range(n_layers))
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def get_balance_loss(model):
    loss_list = [layer.balance_loss for layer in model.layers]
    losses = torch.tensor(loss_list)  # <-- CUT
    return losses.mean()


def run():
    torch.manual_seed(0)
    model = Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(12, 16), torch.randint(0, 3, (12,))
    loss = F.cross_entropy(model(x), y) + 0.01 * get_balance_loss(model)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
