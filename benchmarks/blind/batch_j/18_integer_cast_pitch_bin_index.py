"""Singing-voice model with a pitch head: predicted f0 (Hz) is turned into an FFT-bin index with
.long() and used to read the harmonic energy from the input spectrum as a "harmonicity" loss.
The spectral encoder still trains through the reconstruction loss; the pitch head's gradient is
None because the integer index carries no gradient.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.pitch_head.weight"
EXPECT = "grad_none"

SR, N_FFT = 16000, 512
N_BINS = N_FFT // 2 + 1


class PitchAwareAutoencoder(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(N_BINS, hidden), nn.ReLU())
        self.decoder = nn.Linear(hidden, N_BINS)
        self.pitch_head = nn.Linear(hidden, 1)

    def forward(self, mag):
        h = self.encoder(mag)
        f0 = 80.0 + 400.0 * torch.sigmoid(self.pitch_head(h)).squeeze(-1)
        return self.decoder(h), f0


def harmonicity_loss(mag, f0, n_harm=4):
    hz_per_bin = SR / N_FFT
    loss = 0.0
    for k in range(1, n_harm + 1):
        idx = (k * f0 / hz_per_bin).long().clamp(max=N_BINS - 1)  # <-- CUT
        loss = loss - torch.gather(mag, -1, idx.unsqueeze(-1)).mean()
    return loss


def run():
    torch.manual_seed(0)
    model = PitchAwareAutoencoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    wave = torch.randn(3, 4096)
    mag = torch.stft(wave, N_FFT, 128, window=torch.hann_window(N_FFT), return_complex=True).abs()
    mag = mag.transpose(1, 2)                              # (B, frames, bins)
    recon, f0 = model(mag)
    loss = F.mse_loss(recon, mag) + 0.1 * harmonicity_loss(mag, f0)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
