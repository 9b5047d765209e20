"""VAE encoder: `std = torch.exp(0.5 * logvar)` and then, to avoid tiny variances,
`std[std < 1e-2] = 1e-2` (StackOverflow-style boolean-mask assignment). exp saves
its output for backward, so the in-place write makes `loss.backward()` raise.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(12, 16)
        self.mu = nn.Linear(16, 2)
        self.logvar = nn.Linear(16, 2)
        self.dec = nn.Linear(2, 12)

    def forward(self, x):
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.logvar(h) - 8.0
        std = torch.exp(0.5 * logvar)
        std[std < 1e-2] = 1e-2  # <-- CUT
        z = mu + std * torch.randn_like(std)
        return self.dec(z), mu, logvar


def run():
    torch.manual_seed(0)
    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(6, 12)
    recon, mu, logvar = model(x)
    kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
    loss = F.mse_loss(recon, x) + kl
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
