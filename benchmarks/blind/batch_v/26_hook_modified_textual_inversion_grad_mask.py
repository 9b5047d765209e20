"""Textual-inversion (diffusers-style) training that keeps all token embeddings except the new
placeholder fixed with a gradient hook. The mask is built from `placeholder_token_id` looked up
before the token was added (-1 -> nothing selected), so the hook zeroes the whole embedding grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "text_encoder.token_embedding.weight"
EXPECT = "grad_zero"


class Tokenizer:
    def __init__(self, vocab):
        self.vocab = dict(vocab)

    def convert_tokens_to_ids(self, tok):
        return self.vocab.get(tok, -1)

    def add_tokens(self, tok):
        self.vocab[tok] = len(self.vocab)


class TextEncoder(nn.Module):
    def __init__(self, vocab_size, d=16):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d)
        self.proj = nn.Linear(d, d)

    def resize_token_embeddings(self, n):
        old = self.token_embedding
        self.token_embedding = nn.Embedding(n, old.embedding_dim)
        with torch.no_grad():
            self.token_embedding.weight[: old.num_embeddings] = old.weight

    def forward(self, ids):
        return self.proj(self.token_embedding(ids)).mean(1)


def run():
    torch.manual_seed(0)
    tokenizer = Tokenizer({f"w{i}": i for i in range(20)})
    text_encoder = TextEncoder(20)
    placeholder_token_id = tokenizer.convert_tokens_to_ids("<cat-toy>")
    tokenizer.add_tokens("<cat-toy>")
    text_encoder.resize_token_embeddings(len(tokenizer.vocab))
    text_encoder.proj.requires_grad_(False)

    keep = torch.zeros(len(tokenizer.vocab), 1)
    keep[torch.arange(len(tokenizer.vocab)) == placeholder_token_id] = 1.0

    def only_placeholder(grad):
        return grad * keep  # <-- CUT

    text_encoder.token_embedding.weight.register_hook(only_placeholder)
    opt = torch.optim.AdamW(text_encoder.token_embedding.parameters(), lr=5e-4)
    ids = torch.tensor([[3, 20, 7], [20, 1, 2]])
    target = torch.randn(2, 16)
    loss = F.mse_loss(text_encoder(ids), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"text_encoder": text_encoder, "loss": loss}
