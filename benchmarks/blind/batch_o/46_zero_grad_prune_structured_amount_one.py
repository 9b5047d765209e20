"""Fine-tuning after torch.nn.utils.prune.random_structured(conv, "weight",
amount=1.0, dim=1): the whole second conv is masked, so weight_orig's gradient
(grad * weight_mask) is exactly zero and the layer's output stays zero while
weight decay still changes weight_orig.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import prune

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.process[1].weight_orig"
EXPECT = "grad_zero"


class SimpleModel(nn.Module):
    def __init__(self, c_in=3, c_out=5):
        super().__init__()
        self.process = nn.Sequential(
            nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
            nn.Conv2d(c_out, c_out, 3, padding=1, bias=False),
            nn.BatchNorm2d(c_out),
        )
        self.classifier = nn.Linear(c_out * 8 * 8, 10)

    def forward(self, x):
        x = self.process(x)
        return self.classifier(x.view(x.size(0), -1))


def run():
    torch.manual_seed(0)
    model = SimpleModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=3e-4)
    for name, module in model.named_modules():
        if name == "process.1":
            prune.random_structured(module, name="weight", amount=1.0, dim=1)  # <-- CUT
    data, target = torch.rand(2, 3, 8, 8), torch.tensor([1, 7])
    opt.zero_grad()
    loss = F.cross_entropy(model(data), target)
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
