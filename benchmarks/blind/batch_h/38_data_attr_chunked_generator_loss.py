"""Chunked loss compute adapted from the Annotated Transformer's MultiGPULossCompute: each
chunk of decoder output is re-wrapped as a new leaf from out[:, i:i+k].data so the
generator can run chunk by chunk. The original then pushes the collected chunk grads with
out.backward(gradient=...); the user's port drops that step, so the decoder gets no grad.
Thread: discuss.pytorch.org/t/grad-is-none-autograd-through-list-of-variables-multigpu-transformer/26372
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.decoder.weight_ih_l0"
EXPECT = "grad_none"


class Seq2SeqLite(nn.Module):
    def __init__(self, vocab=25, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.decoder = nn.GRU(d, d, batch_first=True)
        self.generator = nn.Linear(d, vocab)

    def forward(self, tgt_in):
        out, _ = self.decoder(self.embed(tgt_in))
        return out


class ChunkedLossCompute:
    def __init__(self, generator, opt, chunk_size=2):
        self.generator, self.opt, self.chunk_size = generator, opt, chunk_size

    def __call__(self, out, targets, normalize):
        total = 0.0
        for i in range(0, out.size(1), self.chunk_size):
            out_column = out[:, i:i + self.chunk_size].data.requires_grad_(True)  # <-- CUT
            logits = self.generator(out_column)
            l = F.cross_entropy(logits.reshape(-1, logits.size(-1)),
                                targets[:, i:i + self.chunk_size].reshape(-1), reduction="sum") / normalize
            total += l.item()
            l.backward()
        self.opt.step()
        return total


def run():
    torch.manual_seed(0)
    model = Seq2SeqLite()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_compute = ChunkedLossCompute(model.generator, opt)
    tgt = torch.randint(0, 25, (3, 7))
    out = model(tgt[:, :-1])
    total = loss_compute(out, tgt[:, 1:], normalize=float(tgt[:, 1:].numel()))
    return {"model": model, "total": total, "out": out}
