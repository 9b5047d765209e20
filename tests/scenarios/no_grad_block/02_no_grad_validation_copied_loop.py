"""The training loop was copied from the validation loop, including its
`with torch.no_grad():` around the forward. The loss is computed after the
block, but the outputs carry no history, so loss.backward() raises.
"""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 24), nn.Tanh(), nn.Linear(24, 1))
    criterion = nn.MSELoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(2)]
    model.train()
    for xb, yb in batches:
        with torch.no_grad():
            preds = model(xb)  # <-- CUT
        loss = criterion(preds, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"model": model, "loss": loss}
