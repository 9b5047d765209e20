"""TTS-style mel predictor with a post-net. The mel decoder is trained by an L1 loss in torch,
but the post-net's "spectral convergence" loss was ported from a librosa/numpy script: the
refined mel goes through .numpy(), the numpy metric, and torch.from_numpy(...).requires_grad_().
Backward runs on the sum; the post-net's gradient is None.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.postnet[0].weight"
EXPECT = "grad_none"

N_MELS = 16


class MelPredictor(nn.Module):
    def __init__(self, text_dim=12):
        super().__init__()
        self.decoder = nn.Sequential(nn.Linear(text_dim, 32), nn.Tanh(), nn.Linear(32, N_MELS))
        self.postnet = nn.Sequential(nn.Conv1d(N_MELS, N_MELS, 5, padding=2), nn.Tanh())

    def forward(self, text_feats):
        mel = self.decoder(text_feats)                       # (B, T, M)
        residual = self.postnet(mel.transpose(1, 2)).transpose(1, 2)
        return mel, mel + residual


def spectral_convergence_np(pred, ref):
    pred_mag, ref_mag = np.exp(pred), np.exp(ref)
    return np.linalg.norm(ref_mag - pred_mag) / np.linalg.norm(ref_mag)


class TTSLoss:
    def __init__(self, sc_weight=0.5):
        self.sc_weight = sc_weight

    def __call__(self, mel, mel_post, mel_ref):
        l1 = F.l1_loss(mel, mel_ref)
        post = mel_post.detach().cpu().numpy()  # <-- CUT
        sc = spectral_convergence_np(post, mel_ref.numpy())
        sc_loss = torch.from_numpy(np.array(sc, dtype=np.float32)).requires_grad_()
        return l1 + self.sc_weight * sc_loss


def run():
    torch.manual_seed(0)
    model = MelPredictor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = TTSLoss()
    text_feats = torch.randn(2, 20, 12)
    mel_ref = torch.randn(2, 20, N_MELS) * 0.5
    mel, mel_post = model(text_feats)
    loss = criterion(mel, mel_post, mel_ref)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
