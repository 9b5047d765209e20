"""Control (pytorch/pytorch#41696, "provide a convenient way for the user to reset the
grad", grads set to None between iterations): the loop resets grads to None at the
start of each step, logs loss.item() and an accuracy computed from argmax, and keeps a
detached copy of the logits for a confusion matrix. All of these are benign; the
classifier's gradient is normal."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


def reset_grad(params):
    for p in params:
        p.grad = None


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(7, 12), nn.ReLU(), nn.Linear(12, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    history, confusion = [], torch.zeros(4, 4)
    x, y = torch.randn(16, 7), torch.randint(0, 4, (16,))
    reset_grad(model.parameters())
    logits = model(x)
    loss = F.cross_entropy(logits, y)  # <-- CUT
    loss.backward()
    opt.step()
    history.append({"loss": loss.item(), "acc": (logits.argmax(1) == y).float().mean().item()})
    pred = logits.detach().argmax(1)
    for t, p in zip(y.tolist(), pred.tolist()):
        confusion[t, p] += 1
    return {"model": model, "history": history, "confusion": confusion}
