"""Old PyTorch 0.3-era training code computes the loss on output.data (to
"avoid Variable overhead"). .data has no history, so the loss has no grad_fn
and loss.backward() raises "does not require grad".
"""
import torch
import torch.nn as nn

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 8), torch.randint(0, 3, (6,))
    output = model(x)
    loss = criterion(output.data, y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
