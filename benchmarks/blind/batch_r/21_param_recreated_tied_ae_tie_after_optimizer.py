"""Tied autoencoder: the trainer builds the optimizer, then calls model.tie_weights(), which
sets `decoder.weight = nn.Parameter(encoder.weight.t())`. That creates a new parameter (no
sharing) the optimizer never saw; the optimizer's old decoder weight gets no gradient.
Thread: SO "How to share weights between modules in Pytorch?" (nn.Parameter(w.t()) attempt).
"""
import torch
import torch.nn as nn

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "opt.param_groups[0]['params'][2]"
EXPECT = "grad_none"


class TiedAE(nn.Module):
    def __init__(self, d=10, h=4):
        super().__init__()
        self.encoder = nn.Linear(d, h)
        self.decoder = nn.Linear(h, d)

    def tie_weights(self):
        self.decoder.weight = nn.Parameter(self.encoder.weight.t())  # <-- CUT

    def forward(self, x):
        return self.decoder(torch.sigmoid(self.encoder(x)))


class Trainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)
        self.model.tie_weights()

    def step(self, x):
        loss = ((self.model(x) - x) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = TiedAE()
    trainer = Trainer(model)
    loss = trainer.step(torch.randn(8, 10))
    return {"model": model, "opt": trainer.opt, "loss": loss}
