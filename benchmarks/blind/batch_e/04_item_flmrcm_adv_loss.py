"""Federated MR reconstruction with cross-site latent alignment (guopengf/FL-MRCM#10):
to stop a GPU memory leak the adversarial loss was turned into a Python float
before being added to the total loss, instead of only in the logging append.
The reconstruction loss still trains the source path, but the target-site adapter,
which only the adversarial term reaches, never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "local.model.target_adapter.weight"
EXPECT = "grad_none"


class ReconNet(nn.Module):
    def __init__(self, nf=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(2, nf, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(nf, nf, 3, padding=1), nn.ReLU())
        self.target_adapter = nn.Conv2d(nf, nf, 1)
        self.decoder = nn.Conv2d(nf, 2, 3, padding=1)

    def forward(self, x, target=False):
        z = self.encoder(x)
        if target:
            z = self.target_adapter(z)
        return self.decoder(z) + x, z


class LatentDiscriminator(nn.Module):
    def __init__(self, nf=8):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(nf, nf, 3, 2, 1), nn.LeakyReLU(0.2),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(nf, 1))

    def forward(self, z):
        return self.net(z)


class LocalUpdate:
    def __init__(self, lambda_adv=0.01):
        self.model = ReconNet()
        self.disc = LatentDiscriminator()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.lambda_adv = lambda_adv
        self.epoch_loss = []
        self.epoch_adv = []

    def train_step(self, src_in, src_gt, tgt_in):
        self.optimizer.zero_grad()
        out_src, _ = self.model(src_in)
        loss_rec = F.l1_loss(out_src, src_gt)
        _, z_tgt = self.model(tgt_in, target=True)
        d_out = self.disc(z_tgt)
        loss_adv_g = F.binary_cross_entropy_with_logits(d_out, torch.ones_like(d_out))
        loss_adv_g = loss_adv_g.item()  # <-- CUT
        loss = loss_rec + self.lambda_adv * loss_adv_g
        loss.backward()
        self.optimizer.step()
        self.epoch_loss.append(loss.item())
        self.epoch_adv.append(loss_adv_g)
        return loss


def run():
    torch.manual_seed(0)
    local = LocalUpdate()
    src_in = torch.randn(2, 2, 16, 16)
    src_gt = src_in + 0.1 * torch.randn(2, 2, 16, 16)
    tgt_in = torch.randn(2, 2, 16, 16)
    loss = local.train_step(src_in, src_gt, tgt_in)
    return {"local": local, "loss": loss}
