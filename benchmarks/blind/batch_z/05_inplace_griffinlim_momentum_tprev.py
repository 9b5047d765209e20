"""torchaudio#729 "GriffinLim does not allow backpropagation": after the momentum
step (`angles = angles - tprev.mul_(...)`) the phase is normalised with
`angles.div_(complex_norm(angles)...)`, in place on the SubBackward0 output whose
square was saved by complex_norm. A mel-to-linear net trained with a waveform MSE
through GriffinLim fails in backward (the thread: "output 0 of SubBackward0").
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

N_FREQ, N_FRAMES, WIN = 17, 12, 32


def make_basis():
    t = torch.arange(WIN).float()
    k = torch.arange(N_FREQ).float()
    ang = 2 * torch.pi * k[:, None] * t[None, :] / WIN
    return torch.cos(ang), -torch.sin(ang)


class GriffinLim(nn.Module):
    """Old-API Griffin-Lim on (..., freq, frames, 2) real/imag tensors."""

    def __init__(self, n_iter=4, momentum=0.99):
        super().__init__()
        self.n_iter, self.momentum = n_iter, momentum
        cos_b, sin_b = make_basis()
        self.register_buffer("cos_b", cos_b)
        self.register_buffer("sin_b", sin_b)

    def stft(self, frames):  # frames: (B, frames, WIN)
        re = frames @ self.cos_b.t()
        im = frames @ self.sin_b.t()
        return torch.stack([re, im], -1).transpose(1, 2)

    def istft(self, spec):
        re, im = spec[..., 0].transpose(1, 2), spec[..., 1].transpose(1, 2)
        return (re @ self.cos_b + im @ self.sin_b) / N_FREQ

    @staticmethod
    def complex_norm(spec):
        return spec.pow(2.0).sum(-1).pow(0.5)

    def forward(self, specgram):  # (B, freq, frames)
        angles = torch.ones(*specgram.shape, 2) / (2 ** 0.5)
        tprev = torch.zeros_like(angles)
        for _ in range(self.n_iter):
            inverse = self.istft(specgram.unsqueeze(-1) * angles)
            rebuilt = self.stft(inverse)
            angles = rebuilt
            if self.momentum:
                angles = angles - tprev.mul_(self.momentum / (1 + self.momentum))
            norm = self.complex_norm(angles).add(1e-16)
            angles = angles.div_(norm.unsqueeze(-1).expand_as(angles))  # <-- CUT
            tprev = rebuilt
        return self.istft(specgram.unsqueeze(-1) * angles).flatten(1)


def run():
    torch.manual_seed(0)
    wav = torch.randn(1, N_FRAMES * WIN)
    mel = torch.rand(1, N_FRAMES, 8)
    model = nn.Linear(8, N_FREQ)
    resyn = GriffinLim()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    mag = F.softplus(model(mel)).transpose(1, 2)
    out = resyn(mag)
    loss = F.mse_loss(out, wav)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
