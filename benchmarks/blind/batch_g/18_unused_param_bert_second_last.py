"""BERT fine-tuning with the second-to-last encoder layer as features: the encoder
returns all encoded layers and the classifier uses `encoded_layers[-2]`. The last
layer is still computed in forward but its output is never used, so its params
get .grad None (the fused fp16 optimizer then crashes on `p.grad.contiguous()`).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.bert.encoder.layer[-1].intermediate.weight"
EXPECT = "grad_none"


class BertLayer(nn.Module):
    def __init__(self, d, heads=2):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln1 = nn.LayerNorm(d)
        self.intermediate = nn.Linear(d, 4 * d)
        self.output = nn.Linear(4 * d, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, h, key_padding_mask=None):
        a, _ = self.attn(h, h, h, key_padding_mask=key_padding_mask)
        h = self.ln1(h + a)
        return self.ln2(h + self.output(F.gelu(self.intermediate(h))))


class BertEncoder(nn.Module):
    def __init__(self, d, n_layers):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(d) for _ in range(n_layers)])

    def forward(self, h, mask, output_all_encoded_layers=True):
        all_layers = []
        for layer in self.layer:
            h = layer(h, key_padding_mask=mask)
            if output_all_encoded_layers:
                all_layers.append(h)
        return all_layers if output_all_encoded_layers else [h]


class BertModel(nn.Module):
    def __init__(self, vocab=60, d=16, n_layers=3):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, d)
        self.encoder = BertEncoder(d, n_layers)

    def forward(self, ids, mask):
        return self.encoder(self.embeddings(ids), mask)


class BertForSequenceClassification(nn.Module):
    def __init__(self, n_labels=2, layer_index=-2):
        super().__init__()
        self.bert = BertModel()
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(16, n_labels)
        self.layer_index = layer_index

    def forward(self, ids, mask):
        encoded_layers = self.bert(ids, mask)
        sequence_output = encoded_layers[self.layer_index]  # <-- CUT
        pooled = sequence_output[:, 0]
        return self.classifier(self.dropout(pooled))


def run():
    torch.manual_seed(0)
    model = BertForSequenceClassification()
    model.eval()                              # deterministic dropout for the check
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-5)
    ids = torch.randint(0, 60, (3, 7))
    mask = torch.zeros(3, 7, dtype=torch.bool)
    mask[2, 5:] = True
    labels = torch.tensor([0, 1, 1])
    loss = F.cross_entropy(model(ids, mask), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
