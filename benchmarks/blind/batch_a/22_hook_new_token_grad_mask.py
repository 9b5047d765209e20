"""New special tokens are added and only their embedding rows should train
(cf. hiyouga/LlamaFactory#10563 gradient-mask hook): the hook zeroes rows
[0:orig_vocab_size]. orig_vocab_size is read after resize_token_embeddings(), so it
equals the new size and the hook zeroes every row: embed.weight.grad is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embed.weight"
EXPECT = "grad_zero"


class TinyLM(nn.Module):
    def __init__(self, vocab=20, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.body = nn.GRU(d, d, batch_first=True)
        self.lm_head = nn.Linear(d, vocab)

    def resize_token_embeddings(self, new_vocab):
        old = self.embed
        self.embed = nn.Embedding(new_vocab, old.embedding_dim)
        self.lm_head = nn.Linear(old.embedding_dim, new_vocab)
        with torch.no_grad():
            self.embed.weight[:old.num_embeddings] = old.weight

    def forward(self, ids):
        h, _ = self.body(self.embed(ids))
        return self.lm_head(h)


def create_gradient_mask_hook(orig_vocab_size):
    def hook(grad):
        mask = torch.ones_like(grad)
        mask[:orig_vocab_size] = 0.0
        return grad * mask  # <-- CUT
    return hook


def run():
    torch.manual_seed(0)
    model = TinyLM()
    model.resize_token_embeddings(24)  # 4 new special tokens
    orig_vocab_size = model.embed.num_embeddings
    model.embed.weight.register_hook(create_gradient_mask_hook(orig_vocab_size))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 24, (2, 7))
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 24), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
