"""Curriculum by loss: difficulty scores are computed under torch.inference_mode()
and the same logits are reused (after .clone(), as the error message suggested)
for the training loss divided by a learnable temperature. Only the temperature
trains; the model's classifier gets no gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc.weight"
EXPECT = "grad_none"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 12), nn.ReLU())
        self.fc = nn.Linear(12, 3)

    def forward(self, x):
        return self.fc(self.body(x))


def run():
    torch.manual_seed(0)
    model = Model()
    log_temp = nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD(list(model.parameters()) + [log_temp], lr=0.1)
    x, y = torch.randn(14, 6), torch.randint(0, 3, (14,))
    with torch.inference_mode():
        logits = model(x)  # <-- CUT
        difficulty = F.cross_entropy(logits, y, reduction="none")
    weights = torch.softmax(-difficulty.clone(), 0)
    per = F.cross_entropy(logits.clone() / log_temp.exp(), y, reduction="none")
    loss = (weights * per).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "log_temp": log_temp, "loss": loss}
