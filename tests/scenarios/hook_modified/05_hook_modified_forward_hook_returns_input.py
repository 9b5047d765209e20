"""Feature distillation collects block outputs with forward hooks. The hook was
adapted from a forward *pre*-hook and still ends with `return inp[0]`; for a
forward hook a non-None return replaces the module's output, so block 1 is
bypassed: its weights get no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.blocks[1][0].weight"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self, d=16, n=3):
        super().__init__()
        self.stem = nn.Linear(10, d)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(d, d), nn.GELU()) for _ in range(n))
        self.head = nn.Linear(d, 4)

    def forward(self, x):
        h = self.stem(x)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h)


def make_collector(store, name):
    def hook(module, inp, out):
        store[name] = out
        return inp[0]  # <-- CUT
    return hook


def run():
    torch.manual_seed(0)
    teacher, student = Net().eval(), Net()
    feats_s = {}
    student.blocks[1].register_forward_hook(make_collector(feats_s, "b1"))
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    loss = F.cross_entropy(s_logits, y) + F.kl_div(
        F.log_softmax(s_logits, -1), F.softmax(t_logits, -1), reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"teacher": teacher, "student": student, "opt": opt, "loss": loss}
