"""HiFi-GAN (rishikksh20/HiFi-GAN#8): the STFT helper's mel_spectrogram() does
`magnitudes = magnitudes.data`, so mel_fake has no grad_fn. During the generator
warm-up phase (before the discriminator starts) the G loss is the mel L1 loss only,
and loss_g.backward() raises "element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"

HP = {"n_fft": 64, "hop": 16, "n_mels": 8, "disc_start_step": 1000, "lambda_mel": 45.0}


class TacotronSTFT(nn.Module):
    def __init__(self, n_fft, hop, n_mels):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        fb = torch.rand(n_mels, n_fft // 2 + 1)
        self.register_buffer("mel_basis", fb / fb.sum(1, keepdim=True))

    def mel_spectrogram(self, y):
        spec = torch.stft(y, self.n_fft, self.hop, window=self.window, return_complex=True)
        magnitudes = spec.abs()
        magnitudes = magnitudes.data  # <-- CUT
        mel = torch.matmul(self.mel_basis, magnitudes)
        return torch.log(torch.clamp(mel, min=1e-5))


class Generator(nn.Module):
    def __init__(self, n_mels, hop):
        super().__init__()
        self.pre = nn.Conv1d(n_mels, 16, 3, padding=1)
        self.up = nn.ConvTranspose1d(16, 8, hop, stride=hop)
        self.post = nn.Conv1d(8, 1, 3, padding=1)

    def forward(self, mel):
        x = F.leaky_relu(self.pre(mel), 0.1)
        x = F.leaky_relu(self.up(x), 0.1)
        return torch.tanh(self.post(x))


def run():
    torch.manual_seed(0)
    stft = TacotronSTFT(HP["n_fft"], HP["hop"], HP["n_mels"])
    G = Generator(HP["n_mels"], HP["hop"])
    D = nn.Sequential(nn.Conv1d(1, 8, 15, stride=4), nn.LeakyReLU(0.1), nn.Conv1d(8, 1, 3))
    opt_g = torch.optim.AdamW(G.parameters(), lr=2e-4, betas=(0.8, 0.99))
    opt_d = torch.optim.AdamW(D.parameters(), lr=2e-4, betas=(0.8, 0.99))
    audio = torch.randn(2, 16 * 32) * 0.3
    mel = stft.mel_spectrogram(audio)[..., :32]

    step = 0
    fake_audio = G(mel)
    if step >= HP["disc_start_step"]:
        d_real, d_fake = D(audio.unsqueeze(1)), D(fake_audio.detach())
        loss_d = torch.mean((1 - d_real) ** 2) + torch.mean(d_fake ** 2)
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()

    mel_fake = stft.mel_spectrogram(fake_audio.squeeze(1))[..., :32]
    loss_mel = F.l1_loss(mel_fake, mel)
    loss_g = HP["lambda_mel"] * loss_mel
    if step >= HP["disc_start_step"]:
        loss_g = loss_g + torch.mean((1 - D(fake_audio)) ** 2)
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    return {"G": G, "D": D, "loss_g": loss_g}
