"""DreamBooth-LoRA training loop behind an accelerate-like wrapper: the step does
accelerator.backward(loss), then optimizer.zero_grad(), then grad clipping and
optimizer.step(). zero_grad sets every .grad to None (the default since 2.0),
so the LoRA up/down weights have no gradient when the optimizer reads them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "unet.to_q.lora_up.weight"
EXPECT = "grad_none"


class LoraInjectedLinear(nn.Module):
    def __init__(self, in_f, out_f, r=4, scale=1.0):
        super().__init__()
        self.linear = nn.Linear(in_f, out_f, bias=False)
        self.lora_down = nn.Linear(in_f, r, bias=False)
        self.lora_up = nn.Linear(r, out_f, bias=False)
        nn.init.normal_(self.lora_down.weight, std=1 / r)
        nn.init.normal_(self.lora_up.weight, std=0.01)
        self.scale = scale

    def forward(self, x):
        return self.linear(x) + self.lora_up(self.lora_down(x)) * self.scale


class TinyUNet(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.to_q = LoraInjectedLinear(d, d)
        self.to_k = LoraInjectedLinear(d, d)
        self.out = nn.Linear(d, d)
        self.time_emb = nn.Embedding(100, d)

    def forward(self, x, t, cond):
        h = self.inp(x) + self.time_emb(t)
        q, k = self.to_q(h), self.to_k(cond)
        attn = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, -1)
        return self.out(attn @ cond)


class Accelerator:
    sync_gradients = True

    def backward(self, loss):
        loss.backward()

    def clip_grad_norm_(self, params, max_norm):
        params = [p for p in params if p.grad is not None]
        if params:
            torch.nn.utils.clip_grad_norm_(params, max_norm)


def lora_params(model):
    for m in model.modules():
        if isinstance(m, LoraInjectedLinear):
            yield from m.lora_up.parameters()
            yield from m.lora_down.parameters()


def run():
    torch.manual_seed(0)
    accelerator = Accelerator()
    unet = TinyUNet()
    unet.requires_grad_(False)
    for p in lora_params(unet):
        p.requires_grad_(True)
    optimizer = torch.optim.AdamW(lora_params(unet), lr=1e-4, weight_decay=1e-2)

    latents = torch.randn(2, 6, 16)
    cond = torch.randn(2, 5, 16)
    noise = torch.randn_like(latents)
    t = torch.randint(0, 100, (2, 1))
    noisy = latents + 0.5 * noise
    model_pred = unet(noisy, t, cond)
    loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")

    accelerator.backward(loss)
    optimizer.zero_grad()  # <-- CUT
    if accelerator.sync_gradients:
        accelerator.clip_grad_norm_(unet.parameters(), 1.0)
    optimizer.step()
    logs = {"loss": loss.detach().item()}
    return {"unet": unet, "optimizer": optimizer, "logs": logs}
