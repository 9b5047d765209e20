"""Train/validate loop where validation is done first with `model.eval()` and
`with torch.no_grad():`, and the training step below it was indented one level
too deep, so it also runs inside the no_grad block. `loss.backward()` raises
"element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x_val, y_val = torch.randn(4, 8), torch.randint(0, 4, (4,))
    x_tr, y_tr = torch.randn(8, 8), torch.randint(0, 4, (8,))
    model.eval()
    with torch.no_grad():
        val_loss = criterion(model(x_val), y_val)
        print("val loss", val_loss.item())

        model.train()
        outputs = model(x_tr)  # <-- CUT
        loss = criterion(outputs, y_tr)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"model": model, "loss": loss}
