"""Reproduces huggingface/torchMoji#21: the model's forward ends with
`if return_tensor: outputs = outputs.data`, so the loss has no grad_fn. The user wrapped the
loss as `Variable(loss, requires_grad=True)` to silence the backward error; backward now runs,
the loss never goes down, and the LSTM/attention weights get .grad None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.lstm_0.weight_ih_l0"
EXPECT = "grad_none"


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attention_vector = nn.Parameter(torch.randn(dim) * 0.05)

    def forward(self, x):
        logits = x.matmul(self.attention_vector)
        weights = torch.softmax(logits, dim=1).unsqueeze(-1)
        return (x * weights).sum(dim=1), weights


class TorchMoji(nn.Module):
    def __init__(self, vocab=50, emb=16, hidden=12, nb_classes=2, return_tensor=True):
        super().__init__()
        self.return_tensor = return_tensor
        self.embed = nn.Embedding(vocab, emb)
        self.lstm_0 = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.lstm_1 = nn.LSTM(2 * hidden, hidden, batch_first=True, bidirectional=True)
        self.attention = Attention(2 * hidden * 2 + emb)
        self.output_layer = nn.Linear(2 * hidden * 2 + emb, 1 if nb_classes == 2 else nb_classes)

    def forward(self, tokens):
        x = torch.tanh(self.embed(tokens))
        h0, _ = self.lstm_0(x)
        h1, _ = self.lstm_1(h0)
        feats = torch.cat([h1, h0, x], dim=2)
        pooled, att = self.attention(feats)
        outputs = torch.sigmoid(self.output_layer(pooled))
        if self.return_tensor:
            outputs = outputs.data  # <-- CUT
        return outputs


def fit_batch(model, optimizer, tokens, labels):
    model.train()
    optimizer.zero_grad()
    output = model(tokens)
    loss = F.binary_cross_entropy(output.squeeze(-1), labels)
    loss = Variable(loss, requires_grad=True)  # "fix" for the backward error
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss


def run():
    torch.manual_seed(0)
    model = TorchMoji()
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    tokens = torch.randint(1, 50, (4, 7))
    labels = torch.tensor([0.0, 1.0, 1.0, 0.0])
    loss = fit_batch(model, optimizer, tokens, labels)
    return {"model": model, "optimizer": optimizer, "loss": loss}
