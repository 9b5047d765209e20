"""Weight-tied language model that keeps the padding row at zero by resetting it
every step with `model.embed.weight[PAD].zero_()` under no_grad. The reset is
placed between the forward and backward, but the tied output projection saved
that weight for backward, so loss.backward() raises an in-place error.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embed.weight"
EXPECT = "backward_error"

PAD = 0


class TiedLM(nn.Module):
    def __init__(self, vocab=40, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.mix = nn.Linear(d, d)

    def forward(self, ids):
        h = torch.tanh(self.mix(self.embed(ids)))
        return F.linear(h, self.embed.weight)


def run():
    torch.manual_seed(0)
    model = TiedLM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ids = torch.randint(1, 40, (4, 10))
    ids[:, -2:] = PAD
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 40), ids[:, 1:].reshape(-1), ignore_index=PAD)
    with torch.no_grad():
        model.embed.weight[PAD].zero_()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
