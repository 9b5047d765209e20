"""Adding new special tokens to a pretrained seq2seq model while keeping the old rows
fixed: a hook on the embedding weight multiplies its gradient by a row mask that is 1
only for the new token ids. The ids are computed from len(vocab) read after the vocab
was already extended, so the range is empty, the mask is all zeros and so is the grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.emb.weight"
EXPECT = "grad_zero"


class TinySeq2Seq(nn.Module):
    def __init__(self, vocab_size, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.out = nn.Linear(d, vocab_size)

    def forward(self, tokens):
        o, _ = self.rnn(self.emb(tokens))
        return self.out(o)


def make_row_mask_hook(mask):
    def hook(grad):
        return grad * mask  # <-- CUT
    return hook


def run():
    torch.manual_seed(0)
    vocab = {f"tok{i}": i for i in range(20)}
    for special in ["<ctx>", "<sep2>", "<user>"]:
        vocab[special] = len(vocab)
    model = TinySeq2Seq(len(vocab))
    old_vocab_size = len(vocab)
    new_ids = list(range(old_vocab_size, len(vocab)))
    mask = torch.zeros(len(vocab), 1)
    mask[new_ids] = 1.0
    model.emb.weight.register_hook(make_row_mask_hook(mask))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, len(vocab), (4, 9))
    tokens[:, 0] = vocab["<ctx>"]
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, len(vocab)), tokens[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "mask": mask}
