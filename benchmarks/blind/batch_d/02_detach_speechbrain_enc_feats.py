"""SpeechBrain-style Brain class: compute_forward extracts fbank-like features
from the waveform and runs `self.modules.enc(feats.detach())`. The user wants
the gradient of the loss w.r.t. the input waveform (adversarial perturbation),
but wav.grad stays None (speechbrain/speechbrain#1396).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "wavs"
EXPECT = "grad_none"


class Fbank(nn.Module):
    def __init__(self, n_fft=32, hop=16, n_mels=8):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("mel", torch.rand(n_fft // 2 + 1, n_mels))
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, wav):
        frames = wav.unfold(-1, self.n_fft, self.hop) * self.window
        spec = torch.fft.rfft(frames).abs() ** 2
        return torch.log1p(spec @ self.mel)


class Brain:
    def __init__(self, modules, hparams):
        self.modules = nn.ModuleDict(modules)
        self.hparams = hparams

    def compute_forward(self, wavs):
        feats = self.hparams["compute_features"](wavs)
        feats = self.modules["mean_var_norm"](feats)
        x = self.modules["enc"](feats.detach())  # <-- CUT
        logits = self.modules["classifier"](x.mean(dim=1))
        return logits

    def compute_objectives(self, logits, labels):
        return F.cross_entropy(logits, labels)


def run():
    torch.manual_seed(0)
    modules = {
        "mean_var_norm": nn.LayerNorm(8),
        "enc": nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(), nn.Linear(16, 16)),
        "classifier": nn.Linear(16, 3),
    }
    brain = Brain(modules, {"compute_features": Fbank()})
    wavs = torch.randn(2, 160) * 0.1
    labels = torch.tensor([0, 2])
    wavs.requires_grad_(True)  # we want d loss / d waveform for the attack
    logits = brain.compute_forward(wavs)
    loss = brain.compute_objectives(logits, labels)
    loss.backward()
    epsilon = 0.002
    grad = wavs.grad if wavs.grad is not None else torch.zeros_like(wavs)
    adv_wavs = (wavs + epsilon * grad.sign()).detach()
    return {"brain": brain, "wavs": wavs, "adv_wavs": adv_wavs, "loss": loss}
