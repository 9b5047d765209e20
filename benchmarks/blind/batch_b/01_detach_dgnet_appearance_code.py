"""DG-Net re-id generator (NVlabs/DG-Net#59): ft_netAB computes the appearance
code f and then sets f = f.detach() before returning it. In the reconstruction
warm-up step the image reconstruction loss is the only loss, so the appearance
encoder Ea never updates: model.id_a.features[0].weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.id_a.features[0].weight"
EXPECT = "grad_none"


class ft_netAB(nn.Module):
    def __init__(self, class_num=6, dim=16):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, dim, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(dim, class_num)

    def forward(self, x):
        f = self.features(x)
        f = f.detach()  # <-- CUT
        return f, self.classifier(f)


class Generator(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.enc_content = nn.Conv2d(1, dim, 3, padding=1)
        self.mlp = nn.Linear(dim, 2 * dim)
        self.dec = nn.Conv2d(dim, 3, 3, padding=1)

    def decode(self, content, f):
        gamma, beta = self.mlp(f).chunk(2, dim=1)
        return torch.tanh(self.dec(F.relu(content * (1 + gamma[..., None, None]) + beta[..., None, None])))


class DGNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen_a = Generator()
        self.id_a = ft_netAB()

    def recon_step(self, x_a):
        gray = x_a.mean(1, keepdim=True)
        c_a = self.gen_a.enc_content(gray)
        f_a, _ = self.id_a(x_a)
        return self.gen_a.decode(c_a, f_a)


def run():
    torch.manual_seed(0)
    model = DGNet()
    gen_opt = torch.optim.Adam(list(model.gen_a.parameters()) + list(model.id_a.parameters()), lr=1e-4)
    x_a = torch.rand(4, 3, 8, 8) * 2 - 1
    x_aa = model.recon_step(x_a)
    loss_gen_recon_x_a = F.l1_loss(x_aa, x_a)
    gen_opt.zero_grad()
    loss_gen_recon_x_a.backward()
    gen_opt.step()
    return {"model": model, "loss": loss_gen_recon_x_a}
