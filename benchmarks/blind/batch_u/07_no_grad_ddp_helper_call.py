"""pytorch/pytorch#43259 (DDP "Expected to have finished reduction", parameters not used
in producing loss): a helper class's __call__ runs the model twice, the first pass
under torch.no_grad() to pick hard examples; the author later reused the first-pass
logits as the loss input. The projection layer's weights get no gradient, which DDP
reports as unused parameters; on one process: model.proj.weight.grad is None."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.proj.weight"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
        self.proj = nn.Linear(16, 4)
        self.temperature = nn.Parameter(torch.tensor(1.0))

    def forward(self, x):
        return self.proj(self.backbone(x))


class HardExampleStep:
    def __init__(self, keep=0.5):
        self.keep = keep

    def __call__(self, model, criterion, image, label):
        # first time: score the whole batch without building a graph
        with torch.no_grad():
            logits = model(image)  # <-- CUT
            per_sample = F.cross_entropy(logits, label, reduction="none")
        k = max(1, int(self.keep * image.shape[0]))
        idx = per_sample.topk(k).indices
        # second time was meant to be model(image[idx]); the cached logits are reused
        return criterion(logits[idx] / model.temperature, label[idx])


def run():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step = HardExampleStep()
    x = torch.randn(16, 10)
    y = torch.randint(0, 4, (16,))
    opt.zero_grad()
    loss = step(model, nn.CrossEntropyLoss(), x, y)
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
