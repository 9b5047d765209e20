"""model.eval() and torch.inference_mode() were added around the forward "to
speed things up" and the training loop reuses the same helper. The criterion
runs outside the block, but the outputs are inference tensors without history,
so loss.backward() raises "does not require grad".
"""
import torch
import torch.nn as nn

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def forward_batch(model, x):
    model.eval()
    with torch.inference_mode():
        out = model(x)  # <-- CUT
    return out


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(5, 1, 8, 8)
    y = torch.randint(0, 10, (5,))
    out = forward_batch(model, x)
    loss = nn.CrossEntropyLoss()(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
