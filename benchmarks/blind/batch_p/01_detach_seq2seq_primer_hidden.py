"""LSTM seq2seq forecaster: the encoder reads a primer window, the decoder rolls
out the horizon with scheduled sampling. The trainer detaches the encoder state
before handing it to the decoder (copied from a TBPTT snippet), so the encoder
never receives a gradient while the decoder trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder.weight_ih_l0"
EXPECT = "grad_none"

CFG = {"hidden": 16, "primer": 12, "horizon": 6, "tf_ratio": 0.5, "lr": 1e-3}


class Seq2SeqForecaster(nn.Module):
    def __init__(self, n_feat=1, hidden=16):
        super().__init__()
        self.encoder = nn.LSTM(n_feat, hidden, batch_first=True)
        self.decoder = nn.LSTM(n_feat, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_feat)

    def encode(self, primer):
        _, (h, c) = self.encoder(primer)
        return h, c

    def decode_step(self, x_t, hidden):
        o, hidden = self.decoder(x_t, hidden)
        return self.out(o), hidden


class Trainer:
    def __init__(self, model, cfg):
        self.model, self.cfg = model, cfg
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
        self.gen = torch.Generator().manual_seed(1)

    def step(self, series):
        P, H = self.cfg["primer"], self.cfg["horizon"]
        primer, target = series[:, :P], series[:, P:P + H]
        h, c = self.model.encode(primer)
        hidden = (h.detach(), c.detach())  # <-- CUT
        x_t = primer[:, -1:]
        loss = 0.0
        for t in range(H):
            pred, hidden = self.model.decode_step(x_t, hidden)
            loss = loss + F.mse_loss(pred, target[:, t:t + 1])
            use_tf = torch.rand(1, generator=self.gen).item() < self.cfg["tf_ratio"]
            x_t = target[:, t:t + 1] if use_tf else pred.detach()  # scheduled sampling: legit cut
        loss = loss / H
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = Seq2SeqForecaster(hidden=CFG["hidden"])
    t = torch.linspace(0, 6.28, CFG["primer"] + CFG["horizon"])
    series = (torch.sin(t)[None, :, None] + 0.1 * torch.randn(8, t.numel(), 1))
    trainer = Trainer(model, CFG)
    loss = trainer.step(series)
    return {"model": model, "trainer": trainer, "loss": loss}
