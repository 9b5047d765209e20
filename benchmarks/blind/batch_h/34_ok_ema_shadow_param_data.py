"""Control. EMA of the weights as in the forum thread: an EMA helper registers
param.data as shadow copies and, after optimizer.step(), updates the shadows from
param.data (the model keeps the optimizer's weights). .data, clone() and .item() logging
are all outside the loss graph, so the model's weights get normal gradients.
Thread: discuss.pytorch.org/t/how-to-apply-exponential-moving-average-decay-for-variables/10856
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder.weight"
EXPECT = "grad_ok"


class EMA:
    def __init__(self, mu):
        self.mu = mu
        self.shadow = {}

    def register(self, name, val):
        self.shadow[name] = val.clone()

    def __call__(self, name, x):
        new_average = self.mu * x + (1.0 - self.mu) * self.shadow[name]
        self.shadow[name] = new_average.clone()
        return new_average


class BiDAFLite(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.encoder = nn.Linear(d, d)
        self.start = nn.Linear(d, 1)

    def forward(self, ctx_tok):
        h = torch.tanh(self.encoder(self.embed(ctx_tok)))
        return self.start(h).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = BiDAFLite()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=0.5)
    ema = EMA(0.999)
    for name, param in model.named_parameters():
        ema.register(name, param.data)
    ctx_tok = torch.randint(0, 50, (4, 9))
    start_pos = torch.tensor([1, 4, 0, 7])
    loss = F.cross_entropy(model(ctx_tok), start_pos)  # <-- CUT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for name, param in model.named_parameters():
        ema(name, param.data)
    history = [loss.item()]
    return {"model": model, "ema": ema, "loss": loss, "history": history}
