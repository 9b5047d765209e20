"""An Inception-style model returns (main, aux) only when self.training. The
training script calls model.eval() once for a sanity-check prediction and never
switches back, so forward() returns early and the aux head gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.aux.weight"
EXPECT = "grad_none"


class WithAux(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.main = nn.Linear(16, 3)
        self.aux = nn.Linear(16, 3)

    def forward(self, x):
        h = self.body(x)
        out = self.main(h)
        if not self.training:
            return out, None  # <-- CUT
        return out, self.aux(h)


def run():
    torch.manual_seed(0)
    model = WithAux()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.eval()
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    main, aux = model(x)
    loss = F.cross_entropy(main, y)
    if aux is not None:
        loss = loss + 0.4 * F.cross_entropy(aux, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
