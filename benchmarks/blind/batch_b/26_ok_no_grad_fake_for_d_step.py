"""Control (udacity/deep-learning-v2-pytorch#306): the refactor generates fake
images under torch.no_grad() during the discriminator step, which is safe since
only D is updated there. D still trains: D.fc1.weight.grad is nonzero after
d_loss.backward(); G is not needed for this step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "D.fc1.weight"
EXPECT = "grad_ok"


class Discriminator(nn.Module):
    def __init__(self, input_size=16, hidden_dim=32):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, 1)

    def forward(self, x):
        return self.fc2(F.leaky_relu(self.fc1(x), 0.2))


class Generator(nn.Module):
    def __init__(self, z_size=4, output_size=16):
        super().__init__()
        self.fc1 = nn.Linear(z_size, 32)
        self.fc2 = nn.Linear(32, output_size)

    def forward(self, z):
        return torch.tanh(self.fc2(F.leaky_relu(self.fc1(z), 0.2)))


def real_loss(D_out, smooth=False):
    labels = torch.ones_like(D_out) * (0.9 if smooth else 1.0)
    return F.binary_cross_entropy_with_logits(D_out, labels)


def fake_loss(D_out):
    return F.binary_cross_entropy_with_logits(D_out, torch.zeros_like(D_out))


def run():
    torch.manual_seed(0)
    D, G = Discriminator(), Generator()
    d_optimizer = torch.optim.Adam(D.parameters(), lr=2e-3)
    real_images = torch.rand(8, 16) * 2 - 1
    d_optimizer.zero_grad()
    d_real_loss = real_loss(D(real_images), smooth=True)
    with torch.no_grad():
        z = torch.rand(8, 4) * 2 - 1
        fake_images = G(z)
    d_fake_loss = fake_loss(D(fake_images))
    d_loss = d_real_loss + d_fake_loss  # <-- CUT
    d_loss.backward()
    d_optimizer.step()
    return {"D": D, "G": G, "d_loss": d_loss}
