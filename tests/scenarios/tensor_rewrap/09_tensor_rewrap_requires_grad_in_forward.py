"""Encoder-decoder model: the decoder's forward "makes sure" its input is a float
tensor that requires grad with `z = torch.tensor(z, dtype=torch.float32,
requires_grad=True)` (the UserWarning is ignored). This copies the encoder output
into a new leaf, so the encoder never receives a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, z):
        z = torch.tensor(z, dtype=torch.float32, requires_grad=True)  # <-- CUT
        return self.fc(z)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 8), nn.ReLU())
        self.decoder = Decoder()

    def forward(self, x):
        return self.decoder(self.encoder(x))


def run():
    torch.manual_seed(0)
    model = Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(5, 10), torch.randint(0, 3, (5,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
