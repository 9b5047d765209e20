"""pytorch/pytorch#41508 ("nn.MultiheadAttention causes gradients to become NaN under some
use cases", padding masks that mask a whole row): a hand-written attention layer adds a
float key-padding bias of -inf; the last sequence in the batch is all padding, so its score rows
are entirely -inf and softmax gives nan. The loss slices that sequence away, so it is
finite, but slicing sends a 0 gradient into the nan row (0 * nan = nan): attn.q.weight.grad is nan."""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "attn.q.weight"
EXPECT = "grad_nonfinite"


class MaskedSelfAttention(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x, key_padding_mask):
        scores = self.q(x) @ self.k(x).transpose(1, 2) / x.shape[-1] ** 0.5
        scores = scores + torch.zeros_like(scores).masked_fill(key_padding_mask[:, None, :], float("-inf"))  # <-- CUT
        return torch.softmax(scores, dim=-1) @ self.v(x)


def run():
    torch.manual_seed(0)
    attn = MaskedSelfAttention()
    x = torch.randn(3, 5, 8)
    lengths = torch.tensor([5, 3, 0])  # an empty utterance slipped into the batch
    pad = torch.arange(5)[None, :] >= lengths[:, None]
    out = attn(x, pad)
    loss = out[lengths > 0].pow(2).mean()
    loss.backward()
    return {"attn": attn, "loss": loss}
