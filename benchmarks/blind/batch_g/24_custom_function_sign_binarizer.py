"""RNN image compression: the encoder output is binarized with a custom
autograd.Function Sign(input, is_training) using a stochastic forward and a
straight-through backward. backward returns only grad_output, one gradient for
two forward inputs, so loss.backward() fails: "incorrect number of gradients".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "None"
EXPECT = "backward_error"


class SignFunction(Function):
    @staticmethod
    def forward(ctx, input, is_training=True):
        if is_training:
            prob = input.new(input.size()).uniform_()
            x = input.clone()
            x[(1 - input) / 2 <= prob] = 1
            x[(1 - input) / 2 > prob] = -1
            return x
        return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output  # <-- CUT


class Sign(nn.Module):
    def forward(self, x):
        return SignFunction.apply(x, self.training)


class Binarizer(nn.Module):
    def __init__(self, c_in=16, bits=8):
        super().__init__()
        self.conv = nn.Conv2d(c_in, bits, 1, bias=False)
        self.sign = Sign()

    def forward(self, x):
        return self.sign(torch.tanh(self.conv(x)))


class EncoderCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.rnn = nn.Conv2d(32, 16, 3, padding=1)

    def forward(self, x, h):
        x = F.relu(self.conv(x))
        h = torch.tanh(self.rnn(torch.cat([x, h], 1)))
        return h, h


class DecoderCell(nn.Module):
    def __init__(self, bits=8):
        super().__init__()
        self.conv = nn.Conv2d(bits, 16, 1)
        self.up = nn.ConvTranspose2d(16, 3, 4, stride=2, padding=1)

    def forward(self, codes):
        return torch.tanh(self.up(F.relu(self.conv(codes)))) * 0.5


def run():
    torch.manual_seed(0)
    encoder, binarizer, decoder = EncoderCell(), Binarizer(), DecoderCell()
    params = list(encoder.parameters()) + list(binarizer.parameters()) + list(decoder.parameters())
    solver = torch.optim.Adam(params, lr=5e-4)
    batch = torch.rand(2, 3, 16, 16) - 0.5
    h = torch.zeros(2, 16, 8, 8)
    res = batch
    losses = []
    solver.zero_grad()
    for _ in range(2):                       # iterations of residual coding
        encoded, h = encoder(res, h)
        codes = binarizer(encoded)
        output = decoder(codes)
        res = res - output
        losses.append(res.abs().mean())
    loss = sum(losses) / len(losses)
    loss.backward()
    solver.step()
    return {"encoder": encoder, "loss": loss}
