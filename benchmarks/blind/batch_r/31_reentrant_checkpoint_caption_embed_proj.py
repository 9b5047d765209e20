"""Captioning decoder that saves memory by checkpointing its token embedding + projection
block with `checkpoint(..., use_reentrant=True)`. The only input is the integer caption
tensor, so the checkpointed output does not require grad and the block's weights get no grad.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.proj.weight"
EXPECT = "grad_none"

VOCAB = 24


class CkptDecoder(nn.Module):
    def __init__(self, d=12):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        self.proj = nn.Linear(d, d)
        self.gru = nn.GRU(d, d, batch_first=True)
        self.img_proj = nn.Linear(16, d)
        self.out = nn.Linear(d, VOCAB)

    def embed_block(self, captions):
        return torch.tanh(self.proj(self.embed(captions)))

    def forward(self, img_feats, captions):
        words = checkpoint(self.embed_block, captions, use_reentrant=True)  # <-- CUT
        h0 = self.img_proj(img_feats).unsqueeze(0)
        h, _ = self.gru(words, h0)
        return self.out(h)


def run():
    torch.manual_seed(0)
    model = CkptDecoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img_feats = torch.randn(2, 16)
    captions = torch.randint(1, VOCAB, (2, 6))
    logits = model(img_feats, captions[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), captions[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
