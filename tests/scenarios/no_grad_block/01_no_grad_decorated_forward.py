"""The model's forward() was decorated with @torch.no_grad() while writing a
predict() path and the decorator stayed. Training then calls model(x): the
logits have no grad_fn and loss.backward() raises "does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TextCNN(nn.Module):
    def __init__(self, vocab=50, dim=16, n_cls=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.conv = nn.Conv1d(dim, 8, 3, padding=1)
        self.fc = nn.Linear(8, n_cls)

    @torch.no_grad()
    def forward(self, tokens):
        h = self.emb(tokens).transpose(1, 2)
        return self.fc(F.relu(self.conv(h)).amax(dim=2))  # <-- CUT


def run():
    torch.manual_seed(0)
    model = TextCNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tokens = torch.randint(0, 50, (4, 12))
    y = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(tokens), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
