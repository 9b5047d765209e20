"""A speech-enhancement model is trained with a perceptual audio metric used as
the loss (pranaymanocha/PerceptualAudio#14). The metric's forward() converts its
inputs to numpy and back to tensors before its own network, so the loss has a
grad_fn from the metric net but enhancer[0].weight.grad stays None.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "enhancer[0].weight"
EXPECT = "grad_none"


class PerceptualMetric(nn.Module):
    """pip-installed metric: 'expects numpy arrays which it then retransforms'."""

    def __init__(self):
        super().__init__()
        self.feat = nn.Sequential(nn.Conv1d(1, 8, 9, padding=4), nn.LeakyReLU(0.2),
                                  nn.Conv1d(8, 8, 9, stride=2, padding=4))

    def load_audio(self, wav):
        if isinstance(wav, torch.Tensor):
            wav = wav.detach().cpu().numpy()  # <-- CUT
        wav = np.asarray(wav, dtype=np.float32)
        wav = wav / (np.abs(wav).max(axis=-1, keepdims=True) + 1e-8)
        return torch.from_numpy(wav).unsqueeze(1)

    def forward(self, wav_ref, wav_out):
        a = self.feat(self.load_audio(wav_ref))
        b = self.feat(self.load_audio(wav_out))
        return (a - b).abs().mean()


def run():
    torch.manual_seed(0)
    enhancer = nn.Sequential(nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 256))
    loss_fn = PerceptualMetric()
    optimizer = torch.optim.Adam(enhancer.parameters(), lr=1e-4)
    clean = torch.randn(4, 256)
    noisy = clean + 0.3 * torch.randn(4, 256)
    prediction = enhancer(noisy)
    loss = loss_fn.forward(prediction, clean)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"enhancer": enhancer, "loss_fn": loss_fn, "loss": loss}
