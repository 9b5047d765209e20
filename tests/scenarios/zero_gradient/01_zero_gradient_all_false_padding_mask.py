"""A sequence regression loss is masked by a padding mask built as
arange(T) < lengths, but lengths is read from the wrong field (all zeros),
so the mask is all zero: the loss is 0 and every weight gradient is exactly 0.
"""
import torch
import torch.nn as nn

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.weight"
EXPECT = "grad_zero"


def run():
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    x = torch.randn(3, 6, 4)
    y = torch.randn(3, 6)
    batch = {"lengths": torch.tensor([6, 4, 5]), "n_pad": torch.tensor([0, 0, 0])}
    lengths = batch["n_pad"]
    mask = (torch.arange(6)[None, :] < lengths[:, None]).float()
    err = (model(x).squeeze(-1) - y) ** 2
    loss = (err * mask).sum() / mask.sum().clamp(min=1.0)  # <-- CUT
    loss.backward()
    return {"model": model, "loss": loss}
