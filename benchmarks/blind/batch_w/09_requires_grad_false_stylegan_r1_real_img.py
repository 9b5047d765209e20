"""rosinality-style StyleGAN2 D regularization: d_r1_loss calls
autograd.grad(real_pred.sum(), real_img, create_graph=True), but the training loop
no longer sets real_img.requires_grad = True after moving the batch; autograd.grad
raises "One of the differentiated Tensors does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def d_r1_loss(real_pred, real_img):
    grad_real, = autograd.grad(outputs=real_pred.sum(), inputs=real_img, create_graph=True)
    return grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


class Args:
    r1 = 10.0
    d_reg_every = 1
    batch = 4


def run():
    torch.manual_seed(0)
    args = Args()
    generator = nn.Sequential(nn.Linear(8, 3 * 8 * 8), nn.Tanh())
    discriminator = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    d_optim = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.0, 0.99))
    real_img = torch.rand(args.batch, 3, 8, 8) * 2 - 1  # <-- CUT

    requires_grad(generator, False)
    requires_grad(discriminator, True)
    fake_img = generator(torch.randn(args.batch, 8)).view(-1, 3, 8, 8)
    d_loss = F.softplus(discriminator(fake_img)).mean() + F.softplus(-discriminator(real_img)).mean()
    discriminator.zero_grad()
    d_loss.backward()
    d_optim.step()

    if 1 % args.d_reg_every == 0:
        real_pred = discriminator(real_img)
        r1_loss = d_r1_loss(real_pred, real_img)
        discriminator.zero_grad()
        (args.r1 / 2 * r1_loss * args.d_reg_every).backward()
        d_optim.step()
    return {"discriminator": discriminator, "generator": generator}
