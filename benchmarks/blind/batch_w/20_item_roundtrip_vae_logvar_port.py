"""Porting CompVis' trainable logvar scalar into a diffusers-style AutoencoderKL
fine-tune: the loss module keeps logvar as an nn.Parameter but the NLL term is
built from logvar.item() "so the value can also go to the logger". The scalar is
a Python float in the loss, so logvar gets no grad and never moves from 0.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "loss_fn.logvar"
EXPECT = "grad_none"


class TinyAutoencoderKL(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.decoder = nn.ConvTranspose2d(4, 3, 4, stride=2, padding=1)

    def forward(self, x):
        mean, logvar = self.encoder(x).chunk(2, dim=1)
        z = mean + torch.randn_like(mean) * (0.5 * logvar.clamp(-30, 20)).exp()
        kl = 0.5 * (mean.pow(2) + logvar.exp() - 1.0 - logvar).sum((1, 2, 3)).mean()
        return self.decoder(z), kl


class LPIPSWithDiscriminatorLite(nn.Module):
    def __init__(self, logvar_init=0.0, kl_weight=1e-6):
        super().__init__()
        self.logvar = nn.Parameter(torch.ones(()) * logvar_init)
        self.kl_weight = kl_weight
        self.log = {}

    def forward(self, inputs, reconstructions, kl):
        rec_loss = torch.abs(inputs - reconstructions)
        logvar = self.logvar.item()  # <-- CUT
        self.log["logvar"] = logvar
        nll_loss = rec_loss / torch.exp(torch.tensor(logvar)) + logvar
        nll_loss = nll_loss.sum() / nll_loss.shape[0]
        return nll_loss + self.kl_weight * kl


def run():
    torch.manual_seed(0)
    vae, loss_fn = TinyAutoencoderKL(), LPIPSWithDiscriminatorLite()
    opt = torch.optim.Adam(list(vae.parameters()) + list(loss_fn.parameters()), lr=1e-4)
    x = torch.rand(2, 3, 8, 8) * 2 - 1
    rec, kl = vae(x)
    loss = loss_fn(x, rec, kl)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"vae": vae, "loss_fn": loss_fn, "loss": loss}
