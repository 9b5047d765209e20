"""Quantization-aware training: the optimizer is built from the model's params,
then the compression controller runs range initialisation, which replaces each
quantizer's `scale` with a new nn.Parameter computed from the statistics.
The optimizer still holds the old scale tensors, which never get a gradient
(openvinotoolkit/nncf#327).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "optimizer.param_groups[1]['params'][0]"
EXPECT = "grad_none"


class SymmetricQuantizer(nn.Module):
    def __init__(self, bits=8):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))
        self.levels = 2 ** (bits - 1) - 1

    def forward(self, x):
        s = self.scale.abs() + 1e-6
        q = torch.clamp(x / s * self.levels, -self.levels, self.levels)
        q = q + (q.round() - q).detach()
        return q * s / self.levels


class QuantizedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.q1 = SymmetricQuantizer()
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.q1(F.relu(self.fc1(x))))


class CompressionController:
    def __init__(self, model):
        self.model = model

    def initialize_ranges(self, data_loader):
        with torch.no_grad():
            acts = torch.cat([F.relu(self.model.fc1(x)) for x, _ in data_loader])
        for m in self.model.modules():
            if isinstance(m, SymmetricQuantizer):
                m.scale = nn.Parameter(acts.abs().max().reshape(1))  # <-- CUT


def run():
    torch.manual_seed(0)
    model = QuantizedNet()
    quant_params = [p for n, p in model.named_parameters() if n.endswith("scale")]
    other_params = [p for n, p in model.named_parameters() if not n.endswith("scale")]
    optimizer = torch.optim.SGD([{"params": other_params}, {"params": quant_params, "lr": 1e-3}], lr=0.01)
    loader = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(2)]
    CompressionController(model).initialize_ranges(loader)
    x, y = loader[0]
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
