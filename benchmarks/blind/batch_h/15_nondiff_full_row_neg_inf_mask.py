"""Decoder cross-attention masks padded memory positions with -inf (as the forum thread
explains). One sample in the batch has an empty memory (length 0), so its whole score
row is -inf and softmax returns NaN. With anomaly detection on, backward raises
"Function ... returned nan values in its 0th output".
Thread: discuss.pytorch.org/t/masking-in-transformer-decoders-with-inf-rather-than-0s/68154
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class CrossAttention(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d)
        self.o = nn.Linear(d, d)

    def forward(self, x, mem, mem_lengths):
        q = self.q(x)
        k, v = self.kv(mem).chunk(2, dim=-1)
        scores = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5
        pad = torch.arange(mem.shape[1])[None, :] >= mem_lengths[:, None]
        scores = scores.masked_fill(pad[:, None, :], float("-inf"))  # <-- CUT
        attn = torch.softmax(scores, dim=-1)
        return self.o(attn @ v)


def run():
    torch.manual_seed(0)
    attn = CrossAttention()
    head = nn.Linear(8, 5)
    opt = torch.optim.Adam(list(attn.parameters()) + list(head.parameters()), lr=1e-3)
    x = torch.randn(3, 4, 8)
    mem = torch.randn(3, 6, 8)
    mem_lengths = torch.tensor([6, 3, 0])
    y = torch.randint(0, 5, (3, 4))
    with torch.autograd.detect_anomaly(check_nan=True):
        logits = head(attn(x, mem, mem_lengths))
        loss = F.cross_entropy(logits.reshape(-1, 5), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
    opt.step()
    return {"attn": attn, "loss": loss}
