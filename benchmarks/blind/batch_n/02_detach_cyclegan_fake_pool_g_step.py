"""CycleGAN-style trainer: the ImagePool query (meant for the D step) is applied to the
fake before the generator's GAN loss, and the pool detaches, so G_A gets no adversarial grad.
Thread: junyanz/pytorch-CycleGAN-and-pix2pix image pool questions (reconstructed from memory)."""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.G_A.weight"
EXPECT = "grad_none"


class ImagePool:
    def __init__(self):
        self.images = []

    def query(self, x):
        out = x.detach()  # <-- CUT
        self.images.append(out)
        return out


class CycleModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.G_A = nn.Linear(8, 8)
        self.D_B = nn.Linear(8, 1)


def run():
    torch.manual_seed(0)
    model = CycleModel()
    pool = ImagePool()
    opt_G = torch.optim.Adam(model.G_A.parameters(), 2e-4)
    real_A = torch.randn(4, 8)
    fake_B = pool.query(model.G_A(real_A))
    loss_G = ((model.D_B(fake_B) - 1) ** 2).mean()
    opt_G.zero_grad()
    loss_G.backward()
    return {"model": model}
