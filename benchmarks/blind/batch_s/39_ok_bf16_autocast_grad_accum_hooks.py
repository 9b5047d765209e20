"""Control: a custom loop with bfloat16 autocast on CPU, gradient accumulation
over two micro-batches (zero_grad before the loop), a backward hook that only
records gradient norms with .item(), and loss logging via .detach().cpu().numpy().
The first layer's gradient is normal."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    norms = []
    model[0].weight.register_hook(lambda g: norms.append(g.norm().item()))
    x, y = torch.randn(8, 8), torch.randint(0, 3, (8,))
    history = []
    opt.zero_grad()
    for mx, my in zip(x.split(4), y.split(4)):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(mx)
        loss = F.cross_entropy(logits.float(), my) / 2  # <-- CUT
        loss.backward()
        history.append(loss.detach().cpu().numpy())
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return {"model": model, "loss": loss, "norms": norms, "history": history}
