"""Pipeline-parallel stage (pytorch/pytorch#153484, "PP requires all parameters to have
grad in backward"): a stage's forward takes the hidden state plus an optional memory
tensor; when the scheduler passes memory=None the memory projection is skipped, so
its parameters get no gradient and the stage cannot send grads upstream:
stage.mem_proj.weight.grad is None."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "stage.mem_proj.weight"
EXPECT = "grad_none"


class Stage(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.mem_proj = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, h, memory=None):
        h = h + self.ff(self.norm(h))
        if memory is None:
            return h  # <-- CUT
        return h + self.mem_proj(memory).mean(1, keepdim=True)


class Schedule:
    def __init__(self, stages, use_memory):
        self.stages, self.use_memory = stages, use_memory

    def step(self, x, memory, target):
        h = x
        for s in self.stages:
            h = s(h, memory if self.use_memory else None)
        return F.mse_loss(h, target)


def run():
    torch.manual_seed(0)
    stage = Stage()
    sched = Schedule([stage], use_memory=bool(""))  # flag read from an empty env var
    x, mem, tgt = torch.randn(2, 5, 16), torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    loss = sched.step(x, mem, tgt)
    loss.backward()
    return {"stage": stage, "loss": loss}
