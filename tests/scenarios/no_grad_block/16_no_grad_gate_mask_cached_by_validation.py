"""A gated layer caches its sigmoid mask on first use. A quick validation pass under
`torch.no_grad()` after step 1 resets and refills the cache, so on step 2 the training
forward reuses a mask with no graph and the gate logits get no gradient.
"""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.gate_logits"
EXPECT = "grad_none"


class GatedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.gate_logits = nn.Parameter(torch.zeros(6))
        self._mask = None

    def reset_cache(self):
        self._mask = None

    def forward(self, x):
        if self._mask is None:
            self._mask = torch.sigmoid(self.gate_logits)  # <-- CUT
        return self.fc(x) * self._mask


def run():
    torch.manual_seed(0)
    model = GatedNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        x, y = torch.randn(8, 6), torch.randn(8, 6)
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        model.reset_cache()
        with torch.no_grad():
            val_loss = ((model(torch.randn(4, 6)) - torch.randn(4, 6)) ** 2).mean()
    return {"model": model, "loss": loss, "val_loss": val_loss}
