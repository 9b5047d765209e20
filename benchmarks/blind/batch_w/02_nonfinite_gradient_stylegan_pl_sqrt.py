"""StyleGAN2-ADA path-length regularizer: pl_lengths = pl_grads.square().sum(2).mean(1).sqrt()
with no epsilon. A batch row whose latent is all zero (padding in the z batch) maps
to w = 0 in a bias-free mapping, its pl_grads are exactly 0, sqrt'(0) is inf and
the mapping net's grad becomes nan.
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.mapping.fc.weight"
EXPECT = "grad_nonfinite"


class Mapping(nn.Module):
    def __init__(self, z_dim=4, w_dim=4, num_ws=2):
        super().__init__()
        self.fc = nn.Linear(z_dim, w_dim, bias=False)
        self.num_ws = num_ws

    def forward(self, z):
        return self.fc(z).unsqueeze(1).repeat(1, self.num_ws, 1)


class Synthesis(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = nn.Parameter(torch.tensor([[1.0], [0.5]]))

    def forward(self, ws):
        return (ws * self.mod).square().sum(1)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.mapping = Mapping()
        self.synthesis = Synthesis()


class StyleGAN2Loss:
    def __init__(self, G, pl_decay=0.01, pl_weight=2.0):
        self.G, self.pl_decay, self.pl_weight = G, pl_decay, pl_weight
        self.pl_mean = torch.zeros([])

    def accumulate_gradients_Greg(self, gen_z):
        gen_ws = self.G.mapping(gen_z)
        gen_img = self.G.synthesis(gen_ws)
        pl_noise = torch.ones_like(gen_img) / 2.0
        pl_grads, = torch.autograd.grad(outputs=[(gen_img * pl_noise).sum()], inputs=[gen_ws],
                                        create_graph=True)
        pl_lengths = pl_grads.square().sum(2).mean(1).sqrt()  # <-- CUT
        pl_mean = self.pl_mean.lerp(pl_lengths.mean().detach(), self.pl_decay)
        self.pl_mean.copy_(pl_mean)
        pl_penalty = (pl_lengths - pl_mean).square()
        loss_Gpl = pl_penalty.mean() * self.pl_weight
        loss_Gpl.backward()
        return loss_Gpl


def run():
    torch.manual_seed(0)
    G = Generator()
    loss = StyleGAN2Loss(G)
    gen_z = torch.randn(3, 4)
    gen_z[2] = 0.0  # last row of a padded batch
    loss_Gpl = loss.accumulate_gradients_Greg(gen_z)
    return {"G": G, "loss_Gpl": loss_Gpl}
