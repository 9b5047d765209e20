"""Wav2vec-style conv feature encoder with activation checkpointing switched on from a config.
Every conv block goes through checkpoint(..., use_reentrant=True); the first block's only input is
the raw waveform, which does not require grad, so its output does not either and the chain is cut
for all checkpointed blocks. The projection and classifier after them train; the conv blocks get None.
Thread: discuss.pytorch.org/t/116271 (checkpoint causes simple model to diverge), adapted.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder.blocks[0].conv.weight"
EXPECT = "grad_none"

CFG = {"gradient_checkpointing": True, "conv_dims": [16, 16, 16], "kernels": [10, 3, 3], "strides": [5, 2, 2]}


class ConvBlock(nn.Module):
    def __init__(self, c_in, c_out, k, s):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, k, stride=s, bias=False)
        self.norm = nn.GroupNorm(1, c_out)

    def forward(self, x):
        return F.gelu(self.norm(self.conv(x)))


class FeatureEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        dims = [1] + cfg["conv_dims"]
        self.blocks = nn.ModuleList([ConvBlock(dims[i], dims[i + 1], k, s)
                                     for i, (k, s) in enumerate(zip(cfg["kernels"], cfg["strides"]))])
        self.use_ckpt = cfg["gradient_checkpointing"]

    def forward(self, wave):
        x = wave.unsqueeze(1)
        for block in self.blocks:
            if self.use_ckpt and self.training:
                x = checkpoint(block, x, use_reentrant=True)  # <-- CUT
            else:
                x = block(x)
        return x


class SpeechClassifier(nn.Module):
    def __init__(self, cfg, n_classes=6):
        super().__init__()
        self.encoder = FeatureEncoder(cfg)
        self.proj = nn.Linear(cfg["conv_dims"][-1], 32)
        self.classifier = nn.Linear(32, n_classes)

    def forward(self, wave):
        feats = self.encoder(wave).transpose(1, 2)
        return self.classifier(F.relu(self.proj(feats)).mean(1))


def run():
    torch.manual_seed(0)
    model = SpeechClassifier(CFG)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    wave, labels = torch.randn(3, 2000), torch.tensor([0, 3, 5])
    loss = F.cross_entropy(model(wave), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
