"""Control: a text CNN max-pools over time with `torch.max(h, dim=2)[0]` (the
values, which are differentiable) and logs accuracy from `torch.max(logits, 1)[1]`
(the indices). Only the values reach the loss; the conv layer trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.conv.weight"
EXPECT = "grad_ok"


class TextCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 8)
        self.conv = nn.Conv1d(8, 16, kernel_size=3)
        self.fc = nn.Linear(16, 2)

    def forward(self, tokens):
        h = F.relu(self.conv(self.emb(tokens).transpose(1, 2)))
        h = torch.max(h, dim=2)[0]
        return self.fc(h)


def run():
    torch.manual_seed(0)
    model = TextCNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, labels = torch.randint(0, 50, (4, 12)), torch.randint(0, 2, (4,))
    logits = model(tokens)
    loss = F.cross_entropy(logits, labels)  # <-- CUT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    preds = torch.max(logits, 1)[1]
    acc = (preds == labels).float().mean().item()
    return {"model": model, "loss": loss, "acc": acc}
