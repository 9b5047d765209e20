"""BiLSTM-CRF tagger: after building the optimizer, the trainer re-creates the CRF
layer to apply BIO transition constraints (`model.crf = CRF(n_tags, constraints)`).
The new transitions get gradients but are not in the optimizer; the optimizer's
transition matrix is stale and its .grad stays None.
"""
import torch
import torch.nn as nn

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][-1]"
EXPECT = "grad_none"

TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


class CRF(nn.Module):
    def __init__(self, n_tags, forbidden=()):
        super().__init__()
        self.transitions = nn.Parameter(torch.zeros(n_tags, n_tags))
        mask = torch.zeros(n_tags, n_tags)
        for i, j in forbidden:
            mask[i, j] = -1e4
        self.register_buffer("mask", mask)

    def nll(self, emissions, tags):
        trans = self.transitions + self.mask
        B, T, K = emissions.shape
        gold = emissions[:, 0].gather(1, tags[:, :1]).squeeze(1)
        alpha = emissions[:, 0]
        for t in range(1, T):
            gold = gold + trans[tags[:, t - 1], tags[:, t]] + emissions[:, t].gather(1, tags[:, t:t + 1]).squeeze(1)
            alpha = torch.logsumexp(alpha.unsqueeze(2) + trans.unsqueeze(0), dim=1) + emissions[:, t]
        return (torch.logsumexp(alpha, dim=1) - gold).mean()


class BiLSTMCRF(nn.Module):
    def __init__(self, vocab=50, d=16, n_tags=len(TAGS)):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, d, batch_first=True, bidirectional=True)
        self.hidden2tag = nn.Linear(2 * d, n_tags)
        self.crf = CRF(n_tags)

    def forward(self, tokens, tags):
        h, _ = self.lstm(self.emb(tokens))
        return self.crf.nll(self.hidden2tag(h), tags)


def bio_forbidden(tags):
    return [(i, j) for i, a in enumerate(tags) for j, b in enumerate(tags)
            if b.startswith("I-") and a[2:] != b[2:]]


def run():
    torch.manual_seed(0)
    model = BiLSTMCRF()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.crf = CRF(len(TAGS), bio_forbidden(TAGS))  # <-- CUT
    tokens = torch.randint(0, 50, (3, 7))
    tags = torch.randint(0, len(TAGS), (3, 7))
    loss = model(tokens, tags)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
