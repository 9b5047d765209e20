"""Diffusion LM with self-conditioning: with probability 0.5 the model first
predicts x0 without conditioning and feeds it back; otherwise no previous
estimate is passed and the self-conditioning projection is skipped by an early
return. On such a step the projection gets no gradient (DDP raises "Expected to
have finished reduction"; Yuanhy1997/SeqDiffuSeq#25).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.self_cond_proj.weight"
EXPECT = "grad_none"


class TransformerNetModel(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.input_proj = nn.Linear(d, d)
        self.self_cond_proj = nn.Linear(d, d)
        self.time_embed = nn.Sequential(nn.Linear(1, d), nn.SiLU(), nn.Linear(d, d))
        self.backbone = nn.Sequential(nn.Linear(d, 32), nn.GELU(), nn.Linear(32, d))

    def add_self_condition(self, h, x_self_cond):
        if x_self_cond is None:
            return h  # <-- CUT
        return h + self.self_cond_proj(x_self_cond)

    def forward(self, x_t, t, x_self_cond=None):
        h = self.input_proj(x_t) + self.time_embed(t[:, None, None].float() / 1000.0)
        h = self.add_self_condition(h, x_self_cond)
        return self.backbone(h)


def training_losses(model, x_start, t, coin, noise):
    alpha = (1 - t.float() / 1000.0)[:, None, None]
    x_t = alpha.sqrt() * x_start + (1 - alpha).sqrt() * noise
    x_self_cond = None
    if coin < 0.5:  # self-condition on half of the batches
        with torch.no_grad():
            x_self_cond = model(x_t, t).detach()
    model_output = model(x_t, t, x_self_cond)
    return F.mse_loss(model_output, x_start)


def run():
    torch.manual_seed(0)
    model = TransformerNetModel()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x_start = torch.randn(2, 5, 16)
    t = torch.randint(0, 1000, (2,))
    noise = torch.randn_like(x_start)
    coin = 0.73  # torch.rand(()) drawn by the sampler for this step
    loss = training_losses(model, x_start, t, coin, noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
