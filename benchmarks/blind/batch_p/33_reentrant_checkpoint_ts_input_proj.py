"""Long-context time-series Transformer that saves memory with activation
checkpointing. The first checkpointed segment wraps the input projection, whose
input (the raw series) does not require grad; with use_reentrant=True that
segment's output is cut from the graph and the input projection gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.input_proj[0].weight"
EXPECT = "grad_none"


class CheckpointedTSEncoder(nn.Module):
    def __init__(self, n_feat=3, d=16, n_layers=2):
        super().__init__()
        self.input_proj = nn.Sequential(nn.Linear(n_feat, d), nn.GELU())
        self.pos = nn.Parameter(torch.zeros(1, 32, d))
        self.layers = nn.ModuleList(
            [nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True) for _ in range(n_layers)])
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        h = checkpoint(self.input_proj, x, use_reentrant=True)  # <-- CUT
        h = h + self.pos[:, : x.shape[1]]
        for layer in self.layers:
            h = checkpoint(layer, h, use_reentrant=True)
        return self.head(h[:, -1])


def run():
    torch.manual_seed(0)
    model = CheckpointedTSEncoder()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(4, 24, 3)
    y = x[:, -1, :1] * 0.5
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
