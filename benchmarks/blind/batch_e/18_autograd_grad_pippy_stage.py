"""Pipeline-parallel stage backward (pytorch/PiPPy#1031): each stage's backward step
is implemented with torch.autograd.grad(outputs, inputs, grad_outputs) to get the
gradient to send to the previous stage. autograd.grad returns gradients only for
the given inputs and does not accumulate into the stage's parameters, so their .grad
stays None and the optimizer step does nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "stage0.module[0].weight"
EXPECT = "grad_none"


class PipelineStage:
    def __init__(self, module):
        self.module = module
        self.saved = None

    def forward_one_chunk(self, x):
        inp = x.detach().requires_grad_(True)
        out = self.module(inp)
        self.saved = (inp, out)
        return out

    def backward_one_chunk(self, grad_out=None, loss=None):
        inp, out = self.saved
        if loss is not None:
            outputs, grads = (loss,), None
        else:
            outputs, grads = (out,), (grad_out,)
        (grad_in,) = torch.autograd.grad(outputs, (inp,), grad_outputs=grads, allow_unused=True)  # <-- CUT
        return grad_in


def run():
    torch.manual_seed(0)
    stage0 = PipelineStage(nn.Sequential(nn.Linear(8, 16), nn.ReLU()))
    stage1 = PipelineStage(nn.Sequential(nn.Linear(16, 4)))
    params = list(stage0.module.parameters()) + list(stage1.module.parameters())
    optimizer = torch.optim.SGD(params, lr=0.1)
    x = torch.randn(6, 8)
    y = torch.randint(0, 4, (6,))
    optimizer.zero_grad()
    h = stage0.forward_one_chunk(x)
    logits = stage1.forward_one_chunk(h)
    loss = F.cross_entropy(logits, y)
    g1 = stage1.backward_one_chunk(loss=loss)
    stage0.backward_one_chunk(grad_out=g1)
    optimizer.step()
    return {"stage0": stage0, "stage1": stage1, "loss": loss}
