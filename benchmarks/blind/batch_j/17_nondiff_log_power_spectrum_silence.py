"""Speech enhancement net trained with a log-power-spectrum MSE. The predicted waveform is
multiplied by the utterance mask, so the zero-padded tail gives frames whose power is exactly 0
and torch.log(power) is -inf (the thread: loss becomes NaN after adding torch.log). Under anomaly
detection backward raises "Function 'PowBackward0' returned nan values".
Thread: forum Q&A "loss becoming NaN due to using torch.log()", adapted to audio.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

FRAME, HOP = 64, 32


class Enhancer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(1, 8, 9, padding=4), nn.Tanh(), nn.Conv1d(8, 1, 9, padding=4))

    def forward(self, noisy):
        return noisy + self.net(noisy.unsqueeze(1)).squeeze(1)


def log_power_spectrum(wave):
    frames = wave.unfold(-1, FRAME, HOP) * torch.hann_window(FRAME)
    spec = torch.fft.rfft(frames)
    power = spec.real ** 2 + spec.imag ** 2
    return torch.log(power)  # <-- CUT


def run():
    torch.manual_seed(0)
    model = Enhancer()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    clean = torch.randn(2, 512) * 0.1
    noisy = clean + 0.05 * torch.randn(2, 512)
    mask = torch.ones(2, 512)
    mask[1, 320:] = 0.0                                   # shorter utterance, zero-padded
    with torch.autograd.detect_anomaly():
        est = model(noisy) * mask
        target = torch.log((torch.fft.rfft(clean.unfold(-1, FRAME, HOP) * torch.hann_window(FRAME)).abs() ** 2) + 1e-8)
        loss = F.mse_loss(log_power_spectrum(est), target)
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
