"""Audio classifier with a learnable mel-like filterbank applied to the STFT
magnitude. The frontend's forward wraps the whole feature computation in
torch.no_grad() "because STFT is preprocessing", so the learnable filterbank
gets no gradient; the phase via .angle() is only logged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.frontend.fb"
EXPECT = "grad_none"


class Frontend(nn.Module):
    def __init__(self, n_fft, n_bands):
        super().__init__()
        self.n_fft = n_fft
        self.fb = nn.Parameter(torch.rand(n_bands, n_fft // 2 + 1))
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, wav):
        with torch.no_grad():
            spec = torch.stft(wav, self.n_fft, hop_length=32, window=self.window, return_complex=True)
            self.phase_std = spec.angle().std().item()
            feats = torch.log1p(torch.einsum("nf,bft->bnt", self.fb, spec.abs()))  # <-- CUT
        return feats


class AudioNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = Frontend(128, 16)
        self.cls = nn.Linear(16, 5)

    def forward(self, wav):
        return self.cls(self.frontend(wav).mean(-1))


def run():
    torch.manual_seed(0)
    model = AudioNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    wav = torch.randn(4, 1024)
    y = torch.randint(0, 5, (4,))
    loss = F.cross_entropy(model(wav), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
