"""Small DDSP-style harmonic synthesizer fitted to a target tone with a multi-resolution STFT
loss. Its output gain is a learnable gain_db Parameter, but forward() converts decibels to a
linear factor with 10 ** (self.gain_db.item() / 20). The harmonic amplitudes train; gain_db's
gradient is None.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "synth.gain_db"
EXPECT = "grad_none"

SR = 8000


class HarmonicSynth(nn.Module):
    def __init__(self, n_harmonics=6, f0=220.0):
        super().__init__()
        self.f0 = f0
        self.amp_logits = nn.Parameter(torch.zeros(n_harmonics))
        self.gain_db = nn.Parameter(torch.tensor(-6.0))

    def forward(self, n_samples):
        t = torch.arange(n_samples) / SR
        k = torch.arange(1, self.amp_logits.numel() + 1).unsqueeze(1)
        harmonics = torch.sin(2 * torch.pi * self.f0 * k * t)
        amps = torch.softmax(self.amp_logits, 0).unsqueeze(1)
        gain = 10 ** (self.gain_db.item() / 20)  # <-- CUT
        return gain * (amps * harmonics).sum(0)


def multi_resolution_stft_loss(pred, target, ffts=(128, 256)):
    loss = 0.0
    for n_fft in ffts:
        win = torch.hann_window(n_fft)
        P = torch.stft(pred, n_fft, n_fft // 4, window=win, return_complex=True).abs()
        T = torch.stft(target, n_fft, n_fft // 4, window=win, return_complex=True).abs()
        loss = loss + (P - T).abs().mean() + (torch.log(P + 1e-5) - torch.log(T + 1e-5)).abs().mean()
    return loss


def run():
    torch.manual_seed(0)
    synth = HarmonicSynth()
    opt = torch.optim.Adam(synth.parameters(), lr=1e-2)
    t = torch.arange(2048) / SR
    target = 0.3 * torch.sin(2 * torch.pi * 220.0 * t) + 0.1 * torch.sin(2 * torch.pi * 440.0 * t)
    pred = synth(2048)
    loss = multi_resolution_stft_loss(pred, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"synth": synth, "loss": loss}
