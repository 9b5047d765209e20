"""ResNet-style classifier made memory-efficient with a memonger-style
SublinearSequential, which runs its segments through reentrant checkpoint. The stem is
frozen (pretrained), so layer1's input does not require grad; the reentrant checkpoint
output then has no grad_fn, and layer1..layer2 never get gradients (only fc trains).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layer1[0].conv1.weight"
EXPECT = "grad_none"


class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + x)


class SublinearSequential(nn.Sequential):
    def __init__(self, *modules, segments=2):
        super().__init__(*modules)
        self.segments = segments

    def forward(self, input):
        functions = list(self.children())
        seg_size = max(1, len(functions) // self.segments)

        def run_function(start, end):
            def forward(x):
                for j in range(start, end):
                    x = functions[j](x)
                return x
            return forward

        for start in range(0, len(functions), seg_size):
            end = min(start + seg_size, len(functions))
            input = checkpoint(run_function(start, end), input, use_reentrant=True)  # <-- CUT
        return input


class ResNetTiny(nn.Module):
    def __init__(self, n_cls=10, c=8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.layer1 = SublinearSequential(BasicBlock(c), BasicBlock(c))
        self.layer2 = SublinearSequential(BasicBlock(c), BasicBlock(c))
        self.fc = nn.Linear(c, n_cls)
        for p in list(self.conv1.parameters()) + list(self.bn1.parameters()):
            p.requires_grad = False

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer1(out)
        out = self.layer2(out)
        return self.fc(out.mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    model = ResNetTiny().train()
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
    x = torch.randn(4, 3, 8, 8)
    y = torch.randint(0, 10, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
