"""Control (diffusers-style LoRA fine-tune): VAE and text encoder frozen with requires_grad_(False),
latents encoded under no_grad, the noisy-latent target is data, an EMA copy of the LoRA weights is
updated under no_grad, and `loss.detach().item()` is logged. lora_up (zero-initialised, as usual)
gets a normal gradient on the first step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "unet.lora_up.weight"
EXPECT = "grad_ok"


class TinyUNet(nn.Module):
    def __init__(self, d=8, r=2):
        super().__init__()
        self.base = nn.Linear(d + 4, d)
        self.base.requires_grad_(False)
        self.lora_down = nn.Linear(d + 4, r, bias=False)
        self.lora_up = nn.Linear(r, d, bias=False)
        nn.init.zeros_(self.lora_up.weight)

    def forward(self, z, t_emb, cond):
        h = torch.cat([z + t_emb, cond], 1)
        return self.base(h) + self.lora_up(self.lora_down(h))


class EMAModel:
    def __init__(self, params, decay=0.999):
        self.shadow = [p.detach().clone() for p in params]
        self.decay = decay

    @torch.no_grad()
    def step(self, params):
        for s, p in zip(self.shadow, params):
            s.lerp_(p, 1 - self.decay)


def run():
    torch.manual_seed(0)
    vae = nn.Linear(16, 8).requires_grad_(False)
    text_encoder = nn.Embedding(20, 4).requires_grad_(False)
    unet = TinyUNet()
    lora_params = [p for p in unet.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(lora_params, lr=1e-4)
    ema = EMAModel(lora_params)
    alphas_cumprod = torch.linspace(0.99, 0.01, 100)
    pixels, ids = torch.randn(4, 16), torch.randint(0, 20, (4,))
    with torch.no_grad():
        latents = vae(pixels) * 0.18215
        cond = text_encoder(ids)
    noise = torch.randn_like(latents)
    t = torch.randint(0, 100, (4,))
    a = alphas_cumprod[t].unsqueeze(1)
    noisy = a.sqrt() * latents + (1 - a).sqrt() * noise
    pred = unet(noisy, t.float().unsqueeze(1) / 100.0, cond)
    loss = F.mse_loss(pred.float(), noise.float())  # <-- CUT
    opt.zero_grad()
    loss.backward()
    logs = {"loss": loss.detach().item()}
    opt.step()
    ema.step(lora_params)
    return {"unet": unet, "loss": loss, "logs": logs, "ema": ema, "vae": vae}
