"""Trainer with an encoder warm-up freeze (the "trained and later frozen" parameters of
pytorch/pytorch#192307): set_trainable() is meant to freeze the pretrained encoder for
the first `freeze_epochs` epochs only, but the comparison is inverted, so after the
warm-up the encoder is frozen instead of thawed: model.encoder[0].weight.grad is None
at epoch 3 while the decoder trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 8), nn.ReLU())
        self.decoder = nn.Linear(8, 20)

    def forward(self, x):
        return self.decoder(self.encoder(x))


class Trainer:
    def __init__(self, model, freeze_epochs=2):
        self.model, self.freeze_epochs = model, freeze_epochs
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def set_trainable(self, epoch):
        for p in self.model.encoder.parameters():
            p.requires_grad_(epoch < self.freeze_epochs)  # <-- CUT

    def train_epoch(self, epoch, x):
        self.set_trainable(epoch)
        self.opt.zero_grad()
        loss = F.mse_loss(self.model(x), x)
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = AutoEncoder()
    trainer = Trainer(model)
    x = torch.randn(16, 20)
    loss = trainer.train_epoch(3, x)
    return {"model": model, "trainer": trainer, "loss": loss}
