"""After pytorch/PiPPy#1031 ("If using .grad(), gradients will not be accumulated onto the
parameters of the model"): a hand-rolled two-stage pipeline runs each stage's backward with
torch.autograd.grad(outputs, stage_input) to get the gradient to send upstream. The last
stage's weights never get .grad, so its optimizer step does nothing.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "autograd_grad_not_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "stages[1].net[0].weight"
EXPECT = "grad_none"


class Stage(nn.Module):
    def __init__(self, d_in, d_out, last=False):
        super().__init__()
        layers = [nn.Linear(d_in, d_out)]
        if not last:
            layers.append(nn.GELU())
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def stage_backward(stage_output, stage_input, output_grad=None):
    if output_grad is None:  # last stage: stage_output is the loss
        (input_grad,) = torch.autograd.grad(stage_output, [stage_input])  # <-- CUT
    else:
        stage_output.backward(output_grad)
        input_grad = None
    return input_grad


def run():
    torch.manual_seed(0)
    stages = [Stage(8, 16), Stage(16, 4, last=True)]
    optimizers = [torch.optim.SGD(s.parameters(), lr=0.1) for s in stages]
    x = torch.randn(6, 8)
    y = torch.randint(0, 4, (6,))
    for opt in optimizers:
        opt.zero_grad()

    # forward, stage by stage (activations are "sent" detached, as across ranks)
    act0 = stages[0](x)
    recv = act0.detach().requires_grad_(True)
    logits = stages[1](recv)
    loss = F.cross_entropy(logits, y)

    # backward, last stage first
    grad_to_send = stage_backward(loss, recv)
    stage_backward(act0, x, output_grad=grad_to_send)
    for opt in optimizers:
        opt.step()
    return {"stages": stages, "loss": loss, "grad_to_send": grad_to_send}
