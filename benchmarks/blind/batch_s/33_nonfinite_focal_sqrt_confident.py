"""Hand-written focal loss with gamma = 0.5: (1 - pt) ** gamma. On an example
the model already classifies with pt == 1.0 exactly (large logits, float32), the
pow's derivative at 0 is inf, and inf * 0 turns the classifier's gradient into
NaN."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.weight"
EXPECT = "grad_nonfinite"


def focal_loss(logits, target, gamma=0.5):
    logp = F.log_softmax(logits, dim=1).gather(1, target[:, None]).squeeze(1)
    pt = logp.exp()
    mod = (1.0 - pt) ** gamma  # <-- CUT
    return (-mod * logp).mean()


def run():
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    with torch.no_grad():
        model.weight.mul_(40.0)
    x = torch.randn(6, 4) * 3
    target = model(x).argmax(1).detach()
    loss = focal_loss(model(x), target)
    loss.backward()
    return {"model": model, "loss": loss}
