"""Neural equaliser for audio (learnable pre-emphasis, then STFT): the model predicts a low-shelf
gain and applies it by scaling a slice of magnitude bins in place, low = mag[:, :8]; low.mul_(gain).
mag is the output of torch.sqrt, which sqrt saves for backward, and the slice is a view of it, so
backward raises "one of the variables needed for gradient computation has been modified".
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

N_FFT, HOP = 128, 32


class ShelfEQ(nn.Module):
    def __init__(self, n_bins=N_FFT // 2 + 1):
        super().__init__()
        self.pre_emphasis = nn.Conv1d(1, 1, 5, padding=2, bias=False)
        self.analyser = nn.Sequential(nn.Linear(n_bins, 16), nn.ReLU(), nn.Linear(16, 1))
        self.window = torch.hann_window(N_FFT)

    def forward(self, wave):
        wave = self.pre_emphasis(wave.unsqueeze(1)).squeeze(1)
        spec = torch.stft(wave, N_FFT, HOP, window=self.window, return_complex=True)
        mag = torch.sqrt(spec.real ** 2 + spec.imag ** 2 + 1e-8)          # (B, F, T)
        gain = 1.0 + torch.tanh(self.analyser(mag.mean(-1)))               # (B, 1)
        low = mag[:, :8]
        low.mul_(gain.unsqueeze(-1))  # <-- CUT
        return mag


def run():
    torch.manual_seed(0)
    model = ShelfEQ()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    wave = torch.randn(2, 1024)
    target_mag = torch.rand(2, N_FFT // 2 + 1, 1024 // HOP + 1)
    loss = F.l1_loss(torch.log1p(model(wave)), torch.log1p(target_mag))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
