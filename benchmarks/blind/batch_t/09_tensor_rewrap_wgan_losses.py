"""WGAN critic step: losses are packed with torch.tensor([...]) before weighting by learnable
loss weights; the critic gets no gradient. The fake is detached for the D step (legitimate).
Thread: discriminator loss goes through torch.tensor, D does not train (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "tensor_rewrap"
QUERY = 'D[0].weight'
EXPECT = "grad_none"

def run():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    D = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    log_w = nn.Parameter(torch.zeros(2))
    d_opt = torch.optim.RMSprop(list(D.parameters()) + [log_w], 5e-5)
    real = torch.randn(8, 8)
    fake = G(torch.randn(8, 4)).detach()
    parts = torch.tensor([-D(real).mean(), D(fake).mean()])  # <-- CUT
    d_loss = (log_w.exp() * parts).sum() - log_w.sum()
    d_opt.zero_grad(); d_loss.backward(); d_opt.step()
    with torch.no_grad():
        for p in D.parameters():
            p.clamp_(-0.01, 0.01)
    return {"D": D, "G": G, "log_w": log_w}
