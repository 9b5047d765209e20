"""denoising-diffusion Trainer on 1-D signals: the user converts the data to the
UNet's input shape with a learnable Conv1d once, outside the training loop, and
the loop reuses that tensor. Step 2's loss.backward() goes back into the adapter's
freed graph: "Trying to backward through the graph a second time".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TinyUnet(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.time_mlp = nn.Linear(1, ch)
        self.net = nn.Sequential(nn.Conv1d(ch, 16, 3, padding=1), nn.SiLU(), nn.Conv1d(16, ch, 3, padding=1))

    def forward(self, x, t):
        return self.net(x + self.time_mlp(t[:, None].float() / 100)[:, :, None])


class GaussianDiffusion(nn.Module):
    def __init__(self, model, timesteps=100):
        super().__init__()
        self.model = model
        betas = torch.linspace(1e-4, 0.02, timesteps)
        self.register_buffer("alphas_cumprod", torch.cumprod(1 - betas, 0))
        self.num_timesteps = timesteps

    def forward(self, x_start):
        t = torch.randint(0, self.num_timesteps, (x_start.shape[0],))
        noise = torch.randn_like(x_start)
        a = self.alphas_cumprod[t][:, None, None]
        x_noisy = a.sqrt() * x_start + (1 - a).sqrt() * noise
        return F.mse_loss(self.model(x_noisy, t), noise)


class Trainer:
    def __init__(self, diffusion, adapter, data, steps=2):
        self.diffusion, self.adapter, self.steps = diffusion, adapter, steps
        self.opt = torch.optim.Adam(list(diffusion.parameters()) + list(adapter.parameters()), lr=1e-4)
        self.data = self.adapter(data)  # <-- CUT

    def train(self):
        for _ in range(self.steps):
            loss = self.diffusion(self.data)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


def run():
    torch.manual_seed(0)
    adapter = nn.Conv1d(1, 4, 1)
    diffusion = GaussianDiffusion(TinyUnet())
    trainer = Trainer(diffusion, adapter, torch.randn(4, 1, 16))
    trainer.train()
    return {"trainer": trainer}
