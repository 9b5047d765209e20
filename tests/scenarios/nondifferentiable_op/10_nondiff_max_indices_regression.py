"""Age estimation posed as classification over age bins, trained with an MSE
on the predicted bin: `_, pred = logits.max(dim=1)` takes the *indices* of the
max, then `pred.float()` goes into the MSE. The loss has no grad_fn, so
loss.backward() raises "element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.fc.weight"
EXPECT = "backward_error"


class AgeNet(nn.Module):
    def __init__(self, n_bins=10):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(20, 32), nn.ReLU())
        self.fc = nn.Linear(32, n_bins)

    def forward(self, x):
        return self.fc(self.features(x))


def train_step(model, opt, x, age_bin):
    logits = model(x)
    _, pred = logits.max(dim=1)  # <-- CUT
    loss = F.mse_loss(pred.float(), age_bin.float())
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def run():
    torch.manual_seed(0)
    model = AgeNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 20)
    age_bin = torch.randint(0, 10, (16,))
    loss = train_step(model, opt, x, age_bin)
    return {"model": model, "opt": opt, "loss": loss}
