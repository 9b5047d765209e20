"""LoRA DreamBooth with --gradient_checkpointing (cloneofsimo/lora#26): the text
encoder is frozen except for injected LoRA layers, and its blocks run under
checkpoint(..., use_reentrant=True). The token embeddings don't require grad, so
the LoRA weights in the text encoder never change: lora_up.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "text_encoder.layers[0].attn.lora_up.weight"
EXPECT = "grad_none"


class LoraInjectedLinear(nn.Module):
    def __init__(self, d_in, d_out, r=4):
        super().__init__()
        self.linear = nn.Linear(d_in, d_out)
        self.lora_down = nn.Linear(d_in, r, bias=False)
        self.lora_up = nn.Linear(r, d_out, bias=False)
        nn.init.normal_(self.lora_up.weight, std=0.02)

    def forward(self, x):
        return self.linear(x) + self.lora_up(self.lora_down(x))


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.attn = LoraInjectedLinear(d, d)

    def forward(self, h):
        return h + self.attn(self.ln(h))


class TextEncoder(nn.Module):
    def __init__(self, vocab=30, d=16, n_layers=2):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(Block(d) for _ in range(n_layers))
        self.gradient_checkpointing = False

    def forward(self, ids):
        h = self.token_embedding(ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = checkpoint(layer, h, use_reentrant=True)  # <-- CUT
            else:
                h = layer(h)
        return h


def run():
    torch.manual_seed(0)
    text_encoder = TextEncoder()
    unet = nn.Sequential(nn.Linear(16 + 8, 32), nn.SiLU(), nn.Linear(32, 8))
    text_encoder.requires_grad_(False)
    unet.requires_grad_(False)
    lora_params = []
    for m in list(text_encoder.modules()) + list(unet.modules()):
        if isinstance(m, LoraInjectedLinear):
            m.lora_down.requires_grad_(True)
            m.lora_up.requires_grad_(True)
            lora_params += list(m.lora_down.parameters()) + list(m.lora_up.parameters())
    unet_lora = nn.Linear(8, 8)  # stand-in for the UNet LoRA weights
    optimizer = torch.optim.AdamW(lora_params + list(unet_lora.parameters()), lr=1e-4)
    text_encoder.gradient_checkpointing = True
    text_encoder.train()
    ids = torch.randint(0, 30, (2, 5))
    latents = torch.randn(2, 5, 8)
    noise = torch.randn_like(latents)
    enc = text_encoder(ids)
    pred = unet_lora(unet(torch.cat([enc, latents + noise], -1)))
    loss = F.mse_loss(pred, noise)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"text_encoder": text_encoder, "unet": unet, "loss": loss}
