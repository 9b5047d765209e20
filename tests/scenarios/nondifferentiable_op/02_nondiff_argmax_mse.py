"""An ordinal-regression model takes the argmax of its logits as the predicted
class and regresses it onto the label with MSE. argmax returns integer indices
without history, so loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(7, 32), nn.ReLU(), nn.Linear(32, 5))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(14, 7)
    grade = torch.randint(0, 5, (14,)).float()
    logits = model(x)
    pred_grade = logits.argmax(dim=1).float()  # <-- CUT
    loss = F.mse_loss(pred_grade, grade)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
