"""Denoising MLP for a recommender (user683/DRGO#1): a debugging leftover calls
h.detach() after every hidden layer in forward(). Only the last layer trains;
the first layer's weight.grad is None after backward().
Source: https://github.com/user683/DRGO/issues/1
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.in_layers[0].weight"
EXPECT = "grad_none"


class DNN(nn.Module):
    def __init__(self, in_dims=(32, 16), out_dims=(16, 32), emb_size=8):
        super().__init__()
        self.emb_layer = nn.Linear(emb_size, emb_size)
        dims = [in_dims[0] + emb_size] + list(in_dims[1:])
        self.in_layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.out_layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(out_dims[:-1], out_dims[1:]))
        self.emb_size = emb_size

    def timestep_embedding(self, t):
        half = self.emb_size // 2
        freqs = torch.exp(-torch.arange(half, dtype=torch.float32) * (4.0 / half))
        args = t[:, None].float() * freqs[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

    def forward(self, x, timesteps):
        emb = self.emb_layer(self.timestep_embedding(timesteps))
        h = torch.cat([F.normalize(x), emb], dim=-1)
        for layer in self.in_layers:
            h = layer(h)
            h = torch.tanh(h).detach()  # <-- CUT
        for i, layer in enumerate(self.out_layers):
            h = layer(h)
            if i != len(self.out_layers) - 1:
                h = torch.tanh(h)
        return h


def run():
    torch.manual_seed(0)
    model = DNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x_start = (torch.rand(16, 32) > 0.7).float()
    t = torch.randint(0, 50, (16,))
    noise = torch.randn_like(x_start)
    x_t = x_start + 0.1 * noise
    model_output = model(x_t, t)
    loss = F.mse_loss(model_output, x_start)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
