"""BiLSTM-CRF style NER tagger: the emission scores of the gold path are gathered through a
Python loop over `emissions.tolist()` (copied from a Viterbi decoder) and rebuilt with
torch.tensor. The transition matrix trains, the emission layer and LSTM get no grad.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "tagger.hidden2tag.weight"
EXPECT = "grad_none"

TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


class Tagger(nn.Module):
    def __init__(self, vocab=40, d=10, n_tags=len(TAGS)):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, d, batch_first=True, bidirectional=True)
        self.hidden2tag = nn.Linear(2 * d, n_tags)
        self.transitions = nn.Parameter(torch.randn(n_tags, n_tags) * 0.1)

    def emissions(self, tokens):
        h, _ = self.lstm(self.embed(tokens))
        return self.hidden2tag(h)

    def gold_score(self, tokens, tags):
        em = self.emissions(tokens)
        em_rows = em.tolist()  # <-- CUT
        scores = []
        for b, seq in enumerate(tags.tolist()):
            scores.append(sum(em_rows[b][t][tag] for t, tag in enumerate(seq)))
        emit = torch.tensor(scores)
        trans = self.transitions[tags[:, :-1], tags[:, 1:]].sum(1)
        return emit + trans

    def partition(self, tokens):
        return torch.logsumexp(self.transitions, dim=(0, 1)) * tokens.shape[1]


def run():
    torch.manual_seed(0)
    tagger = Tagger()
    opt = torch.optim.SGD(tagger.parameters(), lr=0.1)
    tokens = torch.randint(0, 40, (3, 6))
    tags = torch.randint(0, len(TAGS), (3, 6))
    loss = (tagger.partition(tokens) - tagger.gold_score(tokens, tags)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"tagger": tagger, "opt": opt, "loss": loss}
