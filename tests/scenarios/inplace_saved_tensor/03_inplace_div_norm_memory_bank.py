"""Contrastive training against a prototype matrix: the logits are computed with
z @ prototypes.T, and afterwards z is L2-normalised in place (z /= z.norm())
before being pushed into a memory bank. The matmul saved z, so backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8))
    prototypes = nn.Parameter(torch.randn(5, 8))
    opt = torch.optim.SGD(list(encoder.parameters()) + [prototypes], lr=0.1)
    memory_bank = []
    x = torch.randn(6, 12)
    y = torch.randint(0, 5, (6,))
    z = encoder(x)
    logits = z @ prototypes.t()
    z /= z.norm(dim=1, keepdim=True)  # <-- CUT
    memory_bank.append(z)
    loss = F.cross_entropy(logits / 0.1, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"encoder": encoder, "loss": loss}
