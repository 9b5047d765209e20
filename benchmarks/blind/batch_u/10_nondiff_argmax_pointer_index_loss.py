"""Span-extraction head (pytorch/pytorch#38209 shape: argmax over a score tensor, then
the argmax result used downstream): start/end logits come from two heads, the loss is
a span-length penalty on argmax(start) / argmax(end) plus a cross-entropy on the end
head only. Because argmax is not differentiable the start head gets no gradient at
all: model.start.weight.grad is None, while the end head trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.start.weight"
EXPECT = "grad_none"


class SpanHead(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.encoder = nn.Linear(d, d)
        self.start = nn.Linear(d, 1)
        self.end = nn.Linear(d, 1)

    def forward(self, h):
        enc = torch.tanh(self.encoder(h))
        return self.start(enc).squeeze(-1), self.end(enc).squeeze(-1)


def span_loss(start_logits, end_logits, gold_end, max_len=4):
    s = start_logits.argmax(-1).float()  # <-- CUT
    e_soft = (end_logits.softmax(-1) * torch.arange(end_logits.shape[-1])).sum(-1)
    too_long = F.relu(e_soft - s - max_len)
    return F.cross_entropy(end_logits, gold_end) + too_long.mean()


def run():
    torch.manual_seed(0)
    model = SpanHead()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    h = torch.randn(4, 10, 16)
    gold_end = torch.randint(0, 10, (4,))
    start_logits, end_logits = model(h)
    loss = span_loss(start_logits, end_logits, gold_end)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
