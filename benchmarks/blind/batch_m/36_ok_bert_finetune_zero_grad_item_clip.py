"""Control, after the asker's loop: fine-tuning a BERT-style classifier with
`model.zero_grad()` at the top of each step, `total_loss += loss.item()` logging and
clip_grad_norm_. Nothing is frozen by from_pretrained-style loading, so the encoder
body is fine-tuned too: its first layer's weight has a nonzero gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder.layers[0].linear1.weight"
EXPECT = "grad_ok"


class BertForSequenceClassification(nn.Module):
    def __init__(self, vocab=100, d=32, n_labels=5):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.classifier = nn.Linear(d, n_labels)

    def forward(self, input_ids, attention_mask, labels=None):
        h = self.encoder(self.embeddings(input_ids), src_key_padding_mask=attention_mask == 0)
        logits = self.classifier(h[:, 0])
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return loss, logits


def run():
    torch.manual_seed(0)
    model = BertForSequenceClassification()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    train_loader = [(torch.randint(0, 100, (4, 10)), torch.ones(4, 10, dtype=torch.long),
                     torch.randint(0, 5, (4,))) for _ in range(2)]
    total_loss = 0.0
    model.train()
    for b_input_ids, b_input_mask, b_labels in train_loader:
        model.zero_grad()
        outputs = model(b_input_ids, attention_mask=b_input_mask, labels=b_labels)
        loss = outputs[0]  # <-- CUT
        total_loss += loss.item()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    return {"model": model, "total_loss": total_loss}
