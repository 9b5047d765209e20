"""StyleGAN-port generator: when truncation_psi == 1 (the training default) forward returns the
latent before the mapping network's last layer is applied, so that layer never gets a grad.
Thread: StyleGAN PyTorch port DDP "unused parameters" reports (reconstructed from memory)."""
import torch
import torch.nn as nn

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.mapping_out.weight"
EXPECT = "grad_none"


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.mapping_in = nn.Linear(4, 8)
        self.mapping_out = nn.Linear(8, 8)
        self.synthesis = nn.Linear(8, 6)

    def map(self, z, truncation_psi=1.0):
        w = torch.relu(self.mapping_in(z))
        if truncation_psi == 1.0:
            return w  # <-- CUT
        return self.mapping_out(w) * truncation_psi

    def forward(self, z):
        return self.synthesis(self.map(z))


def run():
    torch.manual_seed(0)
    G = Generator()
    D = nn.Linear(6, 1)
    loss = nn.functional.softplus(-D(G(torch.randn(4, 4)))).mean()
    loss.backward()
    return {"G": G}
