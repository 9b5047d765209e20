"""pytorch/pytorch#40264 ("x.requires_grad_().long() will work"): an age-estimation head
outputs a continuous age, the trainer turns it into a bin index with .long() to compare
with the integer label bins, and regresses the float of that index. The cast returns a
tensor without grad_fn, so only the learnable bin width receives a gradient:
model.age.weight.grad is None."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.age.weight"
EXPECT = "grad_none"


class AgeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 16), nn.ReLU())
        self.age = nn.Linear(16, 1)
        self.bin_width = nn.Parameter(torch.tensor(5.0))

    def forward(self, x):
        return 50.0 * torch.sigmoid(self.age(self.backbone(x))).squeeze(-1)


def binned_loss(model, age, label_bin):
    pred_bin = (age / 5.0).long()  # <-- CUT
    return F.l1_loss(pred_bin.float() * model.bin_width / 5.0, label_bin.float())


def run():
    torch.manual_seed(0)
    model = AgeNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 16)
    label_bin = torch.randint(0, 10, (8,))
    loss = binned_loss(model, model(x), label_bin)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
