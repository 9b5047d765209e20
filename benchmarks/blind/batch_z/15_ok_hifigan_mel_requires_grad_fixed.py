"""Control (rishikksh20/HiFi-GAN PR#9, the fix of #8): mel_spectrogram() keeps
`magnitudes.data` only for the data pipeline and skips it when requires_grad=True,
as used in the generator step. The discriminator step uses fake_audio.detach() and
the ground-truth mel is built without gradients; G trains from adversarial + mel loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "G.pre.weight"
EXPECT = "grad_ok"


class TacotronSTFT(nn.Module):
    def __init__(self, n_fft=64, hop=16, n_mels=8):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        fb = torch.rand(n_mels, n_fft // 2 + 1)
        self.register_buffer("mel_basis", fb / fb.sum(1, keepdim=True))

    def mel_spectrogram(self, y, requires_grad=False):
        spec = torch.stft(y, self.n_fft, self.hop, window=self.window, return_complex=True)
        magnitudes = spec.abs()
        if not requires_grad:
            magnitudes = magnitudes.data
        return torch.log(torch.clamp(self.mel_basis @ magnitudes, min=1e-5))


class Generator(nn.Module):
    def __init__(self, n_mels=8, hop=16):
        super().__init__()
        self.pre = nn.Conv1d(n_mels, 16, 3, padding=1)
        self.up = nn.ConvTranspose1d(16, 8, hop, stride=hop)
        self.post = nn.Conv1d(8, 1, 3, padding=1)

    def forward(self, mel):
        return torch.tanh(self.post(F.leaky_relu(self.up(F.leaky_relu(self.pre(mel), 0.1)), 0.1)))


def run():
    torch.manual_seed(0)
    stft, G = TacotronSTFT(), Generator()
    D = nn.Sequential(nn.Conv1d(1, 8, 15, stride=4), nn.LeakyReLU(0.1), nn.Conv1d(8, 1, 3))
    opt_g = torch.optim.AdamW(G.parameters(), lr=2e-4, betas=(0.8, 0.99))
    opt_d = torch.optim.AdamW(D.parameters(), lr=2e-4, betas=(0.8, 0.99))
    audio = torch.randn(2, 512) * 0.3
    mel = stft.mel_spectrogram(audio)[..., :32]
    fake_audio = G(mel)

    d_real, d_fake = D(audio.unsqueeze(1)), D(fake_audio.detach())
    loss_d = torch.mean((1 - d_real) ** 2) + torch.mean(d_fake ** 2)
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()

    mel_fake = stft.mel_spectrogram(fake_audio.squeeze(1), requires_grad=True)[..., :32]
    loss_g = torch.mean((1 - D(fake_audio)) ** 2) + 45.0 * F.l1_loss(mel_fake, mel)  # <-- CUT
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    return {"G": G, "D": D, "loss_g": loss_g, "loss_d": loss_d.item()}
