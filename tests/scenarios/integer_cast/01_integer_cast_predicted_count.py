"""A crowd-counting head predicts a density sum and the user casts it to a whole
number with .int() before comparing with the true count. The cast result has
no history, so the L1 loss has no grad_fn and backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, img):
        density = F.softplus(self.conv(img))
        return density.sum(dim=(1, 2, 3))


def run():
    torch.manual_seed(0)
    model = Counter()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img = torch.randn(3, 3, 6, 6)
    true_count = torch.tensor([20.0, 35.0, 12.0])
    pred_count = model(img).int()  # <-- CUT
    loss = F.l1_loss(pred_count.float(), true_count)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
