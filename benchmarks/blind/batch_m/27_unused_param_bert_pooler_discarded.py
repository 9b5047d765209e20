"""Sentence classifier on a BERT-style encoder that returns (sequence_output,
pooled_output). The custom head unpacks the tuple as `seq_out, _ = self.bert(...)`
and classifies from seq_out[:, 0], so the pooler's output is thrown away; the
encoder and head train, the pooler gets no gradient (the DDP "unused parameters" case).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.bert.pooler.dense.weight"
EXPECT = "grad_none"


class Pooler(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dense = nn.Linear(d, d)

    def forward(self, h):
        return torch.tanh(self.dense(h[:, 0]))


class MiniBert(nn.Module):
    def __init__(self, vocab=100, d=32):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)
        self.pooler = Pooler(d)

    def forward(self, ids, mask):
        h = self.encoder(self.embeddings(ids), src_key_padding_mask=~mask)
        return h, self.pooler(h)


class SentenceClassifier(nn.Module):
    def __init__(self, n_cls=3, d=32):
        super().__init__()
        self.bert = MiniBert(d=d)
        self.drop = nn.Dropout(0.1)
        self.out = nn.Linear(d, n_cls)

    def forward(self, ids, mask):
        seq_out, _ = self.bert(ids, mask)  # <-- CUT
        return self.out(self.drop(seq_out[:, 0]))


def run():
    torch.manual_seed(0)
    model = SentenceClassifier()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    ids = torch.randint(1, 100, (4, 9))
    mask = torch.ones(4, 9, dtype=torch.bool)
    mask[1, 6:] = False
    y = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(ids, mask), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
