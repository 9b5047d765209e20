"""Lightning-style toggle_optimizer (pre-fix logic of PR #5775): for the generator step it enables
the current optimizer's params, then disables every param of the other optimizers. The encoder is
shared by both optimizers, so the second loop freezes it; the decoder still trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"


class TinyLightningModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.decoder = nn.Linear(16, 8)
        self.critic = nn.Linear(16, 1)
        self._opts = None

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(list(self.encoder.parameters()) + list(self.decoder.parameters()), lr=1e-3)
        opt_d = torch.optim.Adam(list(self.encoder.parameters()) + list(self.critic.parameters()), lr=1e-3)
        self._opts = [opt_g, opt_d]
        return self._opts

    def toggle_optimizer(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                p.requires_grad = True
        for opt in self._opts:
            if opt is optimizer:
                continue
            for group in opt.param_groups:
                for p in group["params"]:
                    p.requires_grad = False  # <-- CUT

    def training_step(self, x):
        opt_g, opt_d = self._opts
        self.toggle_optimizer(opt_g)
        recon = self.decoder(self.encoder(x))
        g_loss = F.mse_loss(recon, x)
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        return g_loss


def run():
    torch.manual_seed(0)
    model = TinyLightningModule()
    model.configure_optimizers()
    x = torch.randn(16, 8)
    loss = model.training_step(x)
    return {"model": model, "loss": loss}
