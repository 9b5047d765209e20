"""WGAN-style critic with a callback system. The weight-clipping callback is
registered on `on_before_backward` instead of `on_after_optimizer_step`, so
`p.clamp_(-c, c)` (under no_grad) modifies the weights that the forward saved
for backward, and `loss.backward()` raises.
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "critic[0].weight"
EXPECT = "backward_error"


class WeightClipper:
    def __init__(self, c=0.01):
        self.c = c

    def on_before_backward(self, model, loss):
        with torch.no_grad():
            for p in model.parameters():
                p.clamp_(-self.c, self.c)  # <-- CUT


def run():
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    opt = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
    callbacks = [WeightClipper()]
    real, fake = torch.randn(8, 6), torch.randn(8, 6)
    opt.zero_grad()
    loss = critic(fake).mean() - critic(real).mean()
    for cb in callbacks:
        cb.on_before_backward(critic, loss)
    loss.backward()
    opt.step()
    return {"critic": critic, "loss": loss}
