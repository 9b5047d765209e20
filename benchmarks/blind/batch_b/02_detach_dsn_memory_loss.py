"""DSN sketch retrieval memory module (haowang1992/DSN#1): the memory loss is
computed from features[...].detach(), so "loss_memory.grad is none". In the
memory warm-up stage it is the only loss, and backward() raises
"element 0 of tensors does not require grad and does not have a grad_fn".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Memory:
    def __init__(self, size=8, dim=16):
        self.sketch = torch.zeros(size, dim)
        self.image = torch.zeros(size, dim)
        self.ptr = 0

    def add_entries(self, f_s, f_i):
        n = f_s.shape[0]
        self.sketch[self.ptr:self.ptr + n] = f_s
        self.image[self.ptr:self.ptr + n] = f_i
        self.ptr = (self.ptr + n) % self.sketch.shape[0]

    def memory_loss(self, f_i):
        sim = F.normalize(f_i, dim=1) @ F.normalize(self.sketch, dim=1).T
        return sim.max(dim=1).values.mean()


def train_memory_stage(model, memory, optimizer, sketches, images):
    features = model(torch.cat([sketches, images]))
    n = sketches.shape[0]
    memory.add_entries(features[:n].detach(), features[n:].detach())
    loss_memory = 1.0 - memory.memory_loss(features[n:].detach())  # <-- CUT
    optimizer.zero_grad()
    loss_memory.backward()
    optimizer.step()
    return loss_memory


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(8, 16))
    memory = Memory()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    sketches, images = torch.randn(4, 3, 12, 12), torch.randn(4, 3, 12, 12)
    loss_memory = train_memory_stage(model, memory, optimizer, sketches, images)
    return {"model": model, "loss_memory": loss_memory}
