"""Feature-extraction fine-tuning of a DistilBERT-style classifier: everything is
frozen and then only `model.classifier` is unfrozen. DistilBERT's head has a
`pre_classifier` layer before `classifier`, which the freeze loop also caught, so
only the last linear layer learns and pre_classifier.weight.grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.pre_classifier.weight"
EXPECT = "grad_none"


class TinyDistilBert(nn.Module):
    def __init__(self, vocab=100, d=32):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=64, batch_first=True)
        self.transformer = nn.TransformerEncoder(layer, num_layers=2)

    def forward(self, ids):
        return self.transformer(self.embeddings(ids))


class DistilBertForSequenceClassification(nn.Module):
    def __init__(self, n_labels=2, d=32):
        super().__init__()
        self.distilbert = TinyDistilBert(d=d)
        self.pre_classifier = nn.Linear(d, d)
        self.classifier = nn.Linear(d, n_labels)
        self.dropout = nn.Dropout(0.1)

    def forward(self, ids):
        h = self.distilbert(ids)[:, 0]
        h = self.dropout(F.relu(self.pre_classifier(h)))
        return self.classifier(h)


def freeze_for_linear_probe(model):
    for p in model.parameters():
        p.requires_grad = False  # <-- CUT
    for p in model.classifier.parameters():
        p.requires_grad = True


def run():
    torch.manual_seed(0)
    model = DistilBertForSequenceClassification()
    freeze_for_linear_probe(model)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=5e-4)
    ids, y = torch.randint(0, 100, (4, 12)), torch.randint(0, 2, (4,))
    model.train()
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
