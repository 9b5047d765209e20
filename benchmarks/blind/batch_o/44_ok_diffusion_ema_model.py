"""Control: DDPM training step with an EMA copy of the denoiser created with
load_state_dict, frozen, and updated with lerp_ under torch.no_grad(); the loss
is logged with .item(). The online denoiser gets a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net[0].weight"
EXPECT = "grad_ok"


class Denoiser(nn.Module):
    def __init__(self, d=6, T=50):
        super().__init__()
        self.temb = nn.Embedding(T, 8)
        self.net = nn.Sequential(nn.Linear(d + 8, 32), nn.SiLU(), nn.Linear(32, d))

    def forward(self, x, t):
        return self.net(torch.cat([x, self.temb(t)], 1))


class EMA:
    def __init__(self, model, decay=0.999):
        self.shadow = Denoiser()
        self.shadow.load_state_dict(model.state_dict())
        self.shadow.requires_grad_(False)
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            s.lerp_(p.detach(), 1 - self.decay)


def run():
    torch.manual_seed(0)
    T = 50
    alpha_bar = torch.cumprod(1 - torch.linspace(1e-4, 0.02, T), 0)
    model = Denoiser(T=T)
    ema = EMA(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x0 = torch.randn(16, 6)
    t = torch.randint(0, T, (16,))
    eps = torch.randn_like(x0)
    ab = alpha_bar[t][:, None]
    x_t = ab.sqrt() * x0 + (1 - ab).sqrt() * eps
    loss = F.mse_loss(model(x_t, t), eps)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema.update(model)
    log = {"loss": loss.item()}
    return {"model": model, "ema": ema, "loss": loss, "log": log}
