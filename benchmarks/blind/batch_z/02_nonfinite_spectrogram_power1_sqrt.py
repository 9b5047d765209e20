"""torchaudio#993 "Spectrogram with power=1 can easily NaN": the magnitude is taken
as (re^2 + im^2).sqrt(). The zero-padded (silent) tail of each utterance gives
sqrt(0) in the forward pass, whose backward is inf * 0 = nan, so the learnable
front-end filter of this keyword spotter gets a NaN gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.frontend.preemph.weight"
EXPECT = "grad_nonfinite"


class LearnableFrontend(nn.Module):
    def __init__(self, n_fft=64, hop=32):
        super().__init__()
        self.preemph = nn.Conv1d(1, 1, 5, padding=2, bias=False)
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, wav):
        x = self.preemph(wav.unsqueeze(1)).squeeze(1)
        spec = torch.stft(x, self.n_fft, self.hop, window=self.window,
                          center=False, return_complex=True)
        ri = torch.view_as_real(spec)
        power = ri.pow(2).sum(-1)
        mag = power.sqrt()  # <-- CUT
        return torch.log1p(mag)


class KWSModel(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.frontend = LearnableFrontend()
        self.conv = nn.Conv1d(33, 16, 3, padding=1)
        self.head = nn.Linear(16, n_classes)

    def forward(self, wav):
        feats = self.frontend(wav)
        h = F.relu(self.conv(feats))
        return self.head(h.mean(-1))


def collate(utterances):
    length = max(u.numel() for u in utterances)
    return torch.stack([F.pad(u, (0, length - u.numel())) for u in utterances])


def run():
    torch.manual_seed(0)
    model = KWSModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = collate([torch.randn(640), torch.randn(384), torch.randn(512)])
    labels = torch.tensor([0, 3, 1])
    loss = F.cross_entropy(model(batch), labels)
    opt.zero_grad()
    loss.backward()
    return {"model": model, "loss": loss}
