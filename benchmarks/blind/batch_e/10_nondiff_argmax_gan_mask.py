"""Adversarial segmentation (eriklindernoren/Keras-GAN#61, ported to PyTorch): the
segmentation generator outputs 2-class scores per pixel, a Lambda-style helper
takes argmax to get a hard mask, and the discriminator judges the mask. argmax has
no gradient, so the generator step leaves every generator weight with .grad None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.net[0].weight"
EXPECT = "grad_none"


class SegGenerator(nn.Module):
    def __init__(self, c_in=3, n_cls=2):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(c_in, 8, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, n_cls, 1))

    def forward(self, x):
        return F.softmax(self.net(x), dim=1)


class MaskDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 8, 4, 2, 1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, 1, 4, 2, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, m):
        return self.net(m)


def to_hard_mask(probs):
    idx = torch.argmax(probs, dim=1, keepdim=True)  # <-- CUT
    return idx.to(torch.float32)


def generator_step(G, D, opt_g, images):
    opt_g.zero_grad()
    fake_mask = to_hard_mask(G(images))
    validity = D(fake_mask)
    g_loss = F.binary_cross_entropy_with_logits(validity, torch.ones_like(validity))
    g_loss.backward()
    opt_g.step()
    return g_loss


def discriminator_step(D, opt_d, real_masks, fake_masks):
    opt_d.zero_grad()
    r, f = D(real_masks), D(fake_masks)
    d_loss = 0.5 * (F.binary_cross_entropy_with_logits(r, torch.ones_like(r))
                    + F.binary_cross_entropy_with_logits(f, torch.zeros_like(f)))
    d_loss.backward()
    opt_d.step()
    return d_loss


def run():
    torch.manual_seed(0)
    G, D = SegGenerator(), MaskDiscriminator()
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
    images = torch.randn(2, 3, 16, 16)
    real_masks = (torch.rand(2, 1, 16, 16) > 0.5).float()
    with torch.no_grad():
        fake_masks = to_hard_mask(G(images))
    d_loss = discriminator_step(D, opt_d, real_masks, fake_masks)
    g_loss = generator_step(G, D, opt_g, images)
    return {"G": G, "D": D, "g_loss": g_loss, "d_loss": d_loss}
