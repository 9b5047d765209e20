"""LEAF-style learnable audio frontend: Gabor filter centre frequencies and bandwidths
are clamped to a valid range by a GaborConstraint module whose forward runs under
torch.no_grad(). The constrained kernel builds the conv filters, so the classifier
trains but the frontend's learnable _kernel never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.frontend._kernel"
EXPECT = "grad_none"

PI = 3.141592653589793


class GaborConstraint(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self._kernel_size = kernel_size

    def forward(self, kernel_data):
        mu_lower, mu_upper = 0.0, PI
        sigma_lower = 4 * (2.0 * 0.6931) ** 0.5 / PI
        sigma_upper = self._kernel_size * (2.0 * 0.6931) ** 0.5 / PI
        with torch.no_grad():
            clipped = torch.stack((kernel_data[:, 0].clamp(mu_lower, mu_upper), kernel_data[:, 1].clamp(sigma_lower, sigma_upper)), dim=1)  # <-- CUT
        return clipped


class GaborConv1D(nn.Module):
    def __init__(self, filters=8, kernel_size=33):
        super().__init__()
        self.kernel_size = kernel_size
        mu = torch.linspace(0.1, 2.5, filters)
        sigma = torch.full((filters,), 6.0)
        self._kernel = nn.Parameter(torch.stack([mu, sigma], dim=1))
        self.constraint = GaborConstraint(kernel_size)

    def forward(self, x):
        kernel = self.constraint(self._kernel)
        t = torch.arange(-(self.kernel_size // 2), self.kernel_size // 2 + 1, dtype=torch.float32)
        center, fwhm = kernel[:, 0:1], kernel[:, 1:2]
        gauss = torch.exp(-(t ** 2) / (2 * fwhm ** 2))
        filt = torch.cat([gauss * torch.cos(center * t), gauss * torch.sin(center * t)], dim=0)
        out = F.conv1d(x, filt.unsqueeze(1), padding=self.kernel_size // 2)
        real, imag = out.chunk(2, dim=1)
        return real ** 2 + imag ** 2


class LeafClassifier(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.frontend = GaborConv1D()
        self.head = nn.Sequential(nn.Conv1d(8, 16, 5, stride=4), nn.ReLU(),
                                  nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, n_classes))

    def forward(self, wav):
        return self.head(torch.log1p(self.frontend(wav)))


def run():
    torch.manual_seed(0)
    model = LeafClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3, weight_decay=1e-6, amsgrad=True)
    wav = torch.rand(4, 1, 400)
    y = torch.randint(0, 5, (4,))
    loss = F.cross_entropy(model(wav), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
