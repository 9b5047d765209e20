"""Control: tied-weight autoencoder where the decoder uses F.linear(h, W.t()) with the
encoder's own weight, as answered for tied weights; the encoder weight's gradient is the sum
of both uses. A `.data` clone kept for plotting and `.item()` logging do not cut anything.
Thread: Cross Validated 239943 "Autoencoders gradient when using tied weights".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.W"
EXPECT = "grad_ok"


class TiedAE(nn.Module):
    def __init__(self, d=10, h=4):
        super().__init__()
        self.W = nn.Parameter(torch.randn(h, d) * 0.1)
        self.b_enc = nn.Parameter(torch.zeros(h))
        self.b_dec = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        h = torch.sigmoid(F.linear(x, self.W, self.b_enc))
        return F.linear(h, self.W.t(), self.b_dec)


def run():
    torch.manual_seed(0)
    model = TiedAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    snapshot = model.W.data.clone()
    x = torch.randn(12, 10)
    loss = F.mse_loss(model(x), x)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    drift = (model.W.data - snapshot).abs().max().item()
    return {"model": model, "opt": opt, "loss": loss, "drift": drift}
