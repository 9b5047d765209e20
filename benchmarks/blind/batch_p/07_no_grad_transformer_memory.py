"""Transformer forecaster trained with scheduled sampling. The free-running
decoder inputs are produced under torch.no_grad() (a deliberate cut), but the
same block also computes the encoder memory that the teacher-forced pass reuses,
so the encoder never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.in_proj.weight"
EXPECT = "grad_none"


class TSTransformer(nn.Module):
    def __init__(self, d=16, horizon=4):
        super().__init__()
        self.in_proj = nn.Linear(1, d)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True), 1)
        self.tgt_proj = nn.Linear(1, d)
        self.dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(d, 2, 32, dropout=0.0, batch_first=True), 1)
        self.head = nn.Linear(d, 1)
        self.horizon = horizon

    def encode(self, src):
        return self.enc(self.in_proj(src))

    def decode(self, tgt_in, memory):
        L = tgt_in.shape[1]
        causal = torch.triu(torch.full((L, L), float("-inf")), diagonal=1)
        return self.head(self.dec(self.tgt_proj(tgt_in), memory, tgt_mask=causal))


def train_step(model, opt, src, tgt, sampling_p=0.5):
    start = src[:, -1:]
    with torch.no_grad():
        memory = model.encode(src)  # <-- CUT
        free = model.decode(torch.cat([start, tgt[:, :-1]], 1), memory)
    mix = (torch.arange(tgt.shape[1]) % 2 == 1).float()[None, :, None] * sampling_p
    tgt_in = torch.cat([start, (1 - mix[:, 1:]) * tgt[:, :-1] + mix[:, 1:] * free[:, :-1]], 1)
    pred = model.decode(tgt_in, memory)
    loss = F.l1_loss(pred, tgt)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def run():
    torch.manual_seed(0)
    model = TSTransformer()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    series = torch.cumsum(torch.randn(6, 16, 1) * 0.1, dim=1)
    loss = train_step(model, opt, series[:, :12], series[:, 12:])
    return {"model": model, "loss": loss}
