"""BERT fine-tuning that freezes the embeddings and the first encoder layer and
turns on gradient checkpointing (reentrant, the default of the time). The hidden
states entering each checkpointed layer do not require grad, so the checkpointed
outputs don't either: the trainable upper layers never receive a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.bert.encoder.layer[2].intermediate.weight"
EXPECT = "grad_none"


class BertLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.intermediate = nn.Linear(d, 2 * d)
        self.output = nn.Linear(2 * d, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, h):
        att = torch.softmax(self.query(h) @ self.key(h).transpose(1, 2) / h.shape[-1] ** 0.5, -1)
        h = self.ln1(h + att @ self.value(h))
        return self.ln2(h + self.output(F.gelu(self.intermediate(h))))


class BertEncoder(nn.Module):
    def __init__(self, d, n_layers):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(d) for _ in range(n_layers)])
        self.gradient_checkpointing = False

    def forward(self, h):
        for layer_module in self.layer:
            if self.gradient_checkpointing and self.training:
                h = checkpoint(layer_module, h, use_reentrant=True)  # <-- CUT
            else:
                h = layer_module(h)
        return h


class BertModel(nn.Module):
    def __init__(self, vocab=50, d=16, n_layers=3):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, d)
        self.encoder = BertEncoder(d, n_layers)

    def gradient_checkpointing_enable(self):
        self.encoder.gradient_checkpointing = True

    def forward(self, ids):
        return self.encoder(self.embeddings(ids))


class BertClassifier(nn.Module):
    def __init__(self, n_labels=3):
        super().__init__()
        self.bert = BertModel()
        self.classifier = nn.Linear(16, n_labels)

    def forward(self, ids):
        return self.classifier(self.bert(ids)[:, 0])


def freeze_bottom(model, n_frozen_layers):
    model.bert.embeddings.requires_grad_(False)
    for layer in model.bert.encoder.layer[:n_frozen_layers]:
        layer.requires_grad_(False)


def run():
    torch.manual_seed(0)
    model = BertClassifier()
    freeze_bottom(model, n_frozen_layers=1)
    model.bert.gradient_checkpointing_enable()
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=3e-5)
    ids = torch.randint(0, 50, (4, 9))
    labels = torch.tensor([0, 2, 1, 1])
    loss = F.cross_entropy(model(ids), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
