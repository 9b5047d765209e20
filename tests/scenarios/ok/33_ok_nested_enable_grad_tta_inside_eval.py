"""Control: test-time adaptation inside an evaluation loop that runs under
`torch.no_grad()`. The adaptation step re-enables autograd with an inner
`torch.enable_grad()` that covers the forward and the entropy loss, so the norm
layer's weight gets a real gradient even though the outer block is no_grad.
"""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[1].weight"
EXPECT = "grad_ok"


def entropy(logits):
    p = logits.softmax(-1)
    return -(p * logits.log_softmax(-1)).sum(-1).mean()


def adapt(model, opt, x):
    with torch.enable_grad():
        logits = model(x)
        loss = entropy(logits)  # <-- CUT
        opt.zero_grad()
        loss.backward()
    opt.step()
    return loss


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.ReLU(), nn.Linear(8, 3))
    for p in model.parameters():
        p.requires_grad_(False)
    model[1].weight.requires_grad_(True)
    model[1].bias.requires_grad_(True)
    opt = torch.optim.SGD([model[1].weight, model[1].bias], lr=0.01)
    preds = []
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(4, 6)
            loss = adapt(model, opt, x)
            preds.append(model(x).argmax(-1))
    return {"model": model, "loss": loss, "preds": preds}
