"""DALLE2-style trainer: an EMA copy of the prior is updated through .data with
lerp after each step and its parameters are frozen; sampling uses the EMA model under
no_grad. Looks cut off, but the online prior trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.online.net[0].weight"
EXPECT = "grad_ok"


class Prior(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.GELU(), nn.Linear(32, dim))

    def forward(self, text_embed):
        return self.net(text_embed)


class EMA(nn.Module):
    def __init__(self, model, beta=0.99, update_after_step=0):
        super().__init__()
        self.beta, self.update_after_step = beta, update_after_step
        self.ema_model = type(model)()
        self.ema_model.load_state_dict(model.state_dict())
        self.ema_model.requires_grad_(False)
        self.step = 0

    def update(self, online):
        self.step += 1
        if self.step <= self.update_after_step:
            self.ema_model.load_state_dict(online.state_dict())
            return
        for pe, po in zip(self.ema_model.parameters(), online.parameters()):
            pe.data.lerp_(po.data, 1 - self.beta)


class PriorTrainer:
    def __init__(self, prior):
        self.online = prior
        self.ema = EMA(prior)
        self.opt = torch.optim.AdamW(prior.parameters(), lr=3e-4)

    def train_step(self, text_embed, image_embed):
        pred = self.online(text_embed)
        loss = F.mse_loss(pred, image_embed)  # <-- CUT
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.ema.update(self.online)
        return loss.item()

    @torch.no_grad()
    def sample(self, text_embed):
        return self.ema.ema_model(text_embed)


def run():
    torch.manual_seed(0)
    trainer = PriorTrainer(Prior())
    t, i = torch.randn(6, 8), torch.randn(6, 8)
    loss = trainer.train_step(t, i)
    sim = F.cosine_similarity(trainer.sample(t), i).mean().item()
    return {"trainer": trainer, "loss": loss, "sim": sim}
