"""GAN generator update written as in the question: the generator's loss term is
built from the discriminator misclassifying an all-real minibatch (targets set to
"fake"), with D in eval mode. No generator output enters that loss, so after
backward and `optimizer_generator.step()` every generator .grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.generator[0].weight"
EXPECT = "grad_none"

LABEL_FAKE, LABEL_REAL = 0, 1


class GAN(nn.Module):
    def __init__(self, z_dim=8, x_dim=16):
        super().__init__()
        self.z_dim = z_dim
        self.generator = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, x_dim))
        self.discriminator = nn.Sequential(nn.Linear(x_dim, 32), nn.LeakyReLU(0.2),
                                           nn.Linear(32, 2), nn.Softmax(dim=-1))


def update_generator(net, optimizer_generator, x_real, batch_size):
    net.generator.train()
    net.discriminator.eval()
    net.generator.zero_grad()
    x_fake = net.generator(torch.randn(batch_size, net.z_dim))
    y_true = torch.full((batch_size,), LABEL_FAKE).long()
    y_pred = net.discriminator(x_real)  # <-- CUT
    loss_real = F.nll_loss(torch.log(y_pred), y_true)
    loss_real.backward()
    optimizer_generator.step()
    return loss_real.item(), x_fake


def run():
    torch.manual_seed(0)
    net = GAN()
    optimizer_generator = torch.optim.Adam(net.generator.parameters(), lr=2e-4)
    x_real = torch.randn(16, 16)
    loss, x_fake = update_generator(net, optimizer_generator, x_real, 16)
    return {"net": net, "loss": loss, "x_fake": x_fake}
