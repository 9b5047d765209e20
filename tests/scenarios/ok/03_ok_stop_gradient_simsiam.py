"""Control: SimSiam-style self-supervision. The target branch is z.detach()
(stop-gradient) by design; the predictor and the encoder still get gradients
through the other branch of the symmetric loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder[0].weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
    predictor = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))
    opt = torch.optim.SGD([*encoder.parameters(), *predictor.parameters()], lr=0.05)
    x = torch.randn(6, 10)
    x1, x2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    z1, z2 = encoder(x1), encoder(x2)
    p1, p2 = predictor(z1), predictor(z2)
    loss = -(F.cosine_similarity(p1, z2.detach()).mean() + F.cosine_similarity(p2, z1.detach()).mean()) / 2  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"encoder": encoder, "predictor": predictor, "loss": loss}
