"""NER tagger trained with per-token losses: the criterion is built with reduction="none" so
padding tokens can be masked, but the masked loss is never averaged before .backward().
backward on a non-scalar tensor without grad_outputs raises "grad can be implicitly created
only for scalar outputs".
Thread: recalled SO title "grad can be implicitly created only for scalar outputs".
"""
import torch
import torch.nn as nn

CAUSE = "other:non_scalar_backward"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Tagger(nn.Module):
    def __init__(self, vocab=40, d=10, n_tags=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.lstm = nn.LSTM(d, d, batch_first=True)
        self.out = nn.Linear(d, n_tags)

    def forward(self, tokens):
        h, _ = self.lstm(self.emb(tokens))
        return self.out(h)


def run():
    torch.manual_seed(0)
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss(reduction="none")
    tokens = torch.tensor([[4, 8, 2, 0], [6, 1, 9, 3]])
    tags = torch.tensor([[1, 2, 0, 0], [0, 3, 4, 0]])
    logits = model(tokens)
    token_loss = criterion(logits.transpose(1, 2), tags)
    loss = token_loss * (tokens != 0).float()  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
