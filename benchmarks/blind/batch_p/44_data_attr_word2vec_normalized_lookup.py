"""Skip-gram with negative sampling. To keep vectors on the unit sphere the
author normalises the input table through .weight.data inside forward and indexes
the normalised copy, so in_embed never receives a gradient while the context
(output) embeddings train.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.in_embed.weight"
EXPECT = "grad_none"


class SkipGramNeg(nn.Module):
    def __init__(self, vocab, d=16):
        super().__init__()
        self.in_embed = nn.Embedding(vocab, d)
        self.out_embed = nn.Embedding(vocab, d)
        self.in_embed.weight.data.uniform_(-1, 1)
        self.out_embed.weight.data.uniform_(-1, 1)

    def forward_input(self, words):
        table = F.normalize(self.in_embed.weight.data, dim=1)  # <-- CUT
        return table[words]

    def forward(self, center, context, noise):
        u = self.forward_input(center)
        v = self.out_embed(context)
        n = self.out_embed(noise)
        pos = F.logsigmoid((u * v).sum(-1))
        neg = F.logsigmoid(-(n @ u.unsqueeze(-1)).squeeze(-1)).sum(-1)
        return -(pos + neg).mean()


def skipgram_pairs(tokens, window=2):
    pairs = [(tokens[i], tokens[j]) for i in range(len(tokens))
             for j in range(max(0, i - window), min(len(tokens), i + window + 1)) if i != j]
    return np.array(pairs)


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    corpus = "the cat sat on the mat the dog sat on the log".split()
    vocab = {w: i for i, w in enumerate(sorted(set(corpus)))}
    pairs = skipgram_pairs([vocab[w] for w in corpus])
    counts = np.bincount([vocab[w] for w in corpus], minlength=len(vocab)) ** 0.75
    noise_dist = torch.tensor(counts / counts.sum(), dtype=torch.float)
    model = SkipGramNeg(len(vocab))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    batch = torch.from_numpy(pairs[rng.permutation(len(pairs))[:16]])
    noise = torch.multinomial(noise_dist, 16 * 5, replacement=True).view(16, 5)
    loss = model(batch[:, 0], batch[:, 1], noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
