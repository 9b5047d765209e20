"""OpenFlamingo-style gradient masking of the LM input embeddings
(mlfoundations/open_flamingo#63/#76): only the rows of the newly added <image>
and <|endofchunk|> tokens should train. The ids are looked up before the tokens are
added to the tokenizer, the list is empty, and the hook zeroes every row.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "lang_encoder.embed_tokens.weight"
EXPECT = "grad_zero"


class Tokenizer:
    def __init__(self, vocab):
        self.vocab = dict(vocab)

    def add_special_tokens(self, tokens):
        for t in tokens:
            self.vocab.setdefault(t, len(self.vocab))

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab[t] for t in tokens if t in self.vocab]


class LangEncoder(nn.Module):
    def __init__(self, vocab_size, d=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, d)
        self.block = nn.Sequential(nn.Linear(d, d), nn.GELU())
        self.lm_head = nn.Linear(d, vocab_size)

    def forward(self, ids):
        return self.lm_head(self.block(self.embed_tokens(ids)))


def make_mask_hook(trainable_ids):
    def mask_embedding_grad(grad):
        mask = torch.zeros_like(grad)
        mask[trainable_ids] = 1.0
        return grad * mask  # <-- CUT
    return mask_embedding_grad


def run():
    torch.manual_seed(0)
    tokenizer = Tokenizer({f"tok{i}": i for i in range(20)})
    new_tokens = ["<image>", "<|endofchunk|>"]
    trainable_ids = tokenizer.convert_tokens_to_ids(new_tokens)
    tokenizer.add_special_tokens(new_tokens)
    lang_encoder = LangEncoder(len(tokenizer.vocab))
    lang_encoder.embed_tokens.weight.register_hook(make_mask_hook(trainable_ids))
    opt = torch.optim.AdamW(lang_encoder.parameters(), lr=1e-4)
    ids = torch.tensor([[20, 3, 5, 21, 20, 7, 9, 21]])
    logits = lang_encoder(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"lang_encoder": lang_encoder, "tokenizer": tokenizer, "loss": loss}
