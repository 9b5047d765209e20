"""pytorch/pytorch#9811 ("DataParallel does not work with tensors of dimension 0": scalar
losses returned by each replica are gathered into a vector): a CPU re-creation of a
model-parallel wrapper whose forward returns the loss per replica and stacks them;
the trainer calls loss.backward() on the stacked vector, which raises "grad can be
implicitly created only for scalar outputs"."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "other:nonscalar_backward_without_grad_outputs"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class LossModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 3)

    def forward(self, x, y):
        return F.mse_loss(self.net(x), y)


class FakeDataParallel(nn.Module):
    def __init__(self, module, n_replicas=2):
        super().__init__()
        self.module, self.n = module, n_replicas

    def forward(self, x, y):
        outs = [self.module(xc, yc) for xc, yc in zip(x.chunk(self.n), y.chunk(self.n))]
        return torch.stack(outs)  # <-- CUT


def run():
    torch.manual_seed(0)
    model = FakeDataParallel(LossModel())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.zeros(4, 3), torch.ones(4, 3)
    loss = model(x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
