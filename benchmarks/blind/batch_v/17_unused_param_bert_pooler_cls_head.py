"""Custom classifier on a BERT-like encoder (transformers-style outputs): the user's head reads
`outputs.last_hidden_state[:, 0]` instead of `outputs.pooler_output`, so the pooler dense layer
runs but its output never reaches the loss; DDP reports the pooler as unused and its grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.bert.pooler.dense.weight"
EXPECT = "grad_none"


class ModelOutput(dict):
    __getattr__ = dict.__getitem__


class BertPooler(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dense = nn.Linear(d, d)

    def forward(self, hidden_states):
        return torch.tanh(self.dense(hidden_states[:, 0]))


class TinyBert(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, d)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True), 1)
        self.pooler = BertPooler(d)

    def forward(self, input_ids):
        seq = self.encoder(self.embeddings(input_ids))
        return ModelOutput(last_hidden_state=seq, pooler_output=self.pooler(seq))


class SentimentClassifier(nn.Module):
    def __init__(self, n_cls=3, d=16):
        super().__init__()
        self.bert = TinyBert(d=d)
        self.dropout = nn.Dropout(0.0)
        self.classifier = nn.Linear(d, n_cls)

    def forward(self, input_ids):
        outputs = self.bert(input_ids)
        cls = outputs.last_hidden_state[:, 0]  # <-- CUT
        return self.classifier(self.dropout(cls))


def run():
    torch.manual_seed(0)
    model = SentimentClassifier()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    ids, labels = torch.randint(0, 50, (4, 7)), torch.tensor([0, 2, 1, 0])
    loss = F.cross_entropy(model(ids), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
