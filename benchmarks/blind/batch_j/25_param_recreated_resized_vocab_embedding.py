"""Language-model fine-tuning: new special tokens are added to the vocabulary after the optimizer
was built, and the embedding is rebuilt at the new size with the old rows copied in. The model
trains through the new embedding, but the optimizer still holds the old embedding weight, whose
.grad is None, so the embeddings are never updated by opt.step().
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab, dim=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, batch_first=True)
        self.decoder = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.decoder(h)


def resize_token_embeddings(model, new_vocab):
    old = model.embed
    model.embed = nn.Embedding(new_vocab, old.embedding_dim)  # <-- CUT
    with torch.no_grad():
        model.embed.weight[: old.num_embeddings] = old.weight
    old_dec = model.decoder
    model.decoder = nn.Linear(old_dec.in_features, new_vocab)
    with torch.no_grad():
        model.decoder.weight[: old_dec.out_features] = old_dec.weight
        model.decoder.bias[: old_dec.out_features] = old_dec.bias


def run():
    torch.manual_seed(0)
    model = LSTMLanguageModel(vocab=30)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    resize_token_embeddings(model, 30 + 2)          # <bos_speaker>, <eos_speaker>
    tokens = torch.randint(0, 32, (3, 8))
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 32), tokens[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
