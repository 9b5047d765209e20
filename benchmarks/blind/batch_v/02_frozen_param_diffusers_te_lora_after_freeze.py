"""SDXL DreamBooth-LoRA style script with --train_text_encoder: LoRA layers are injected into the
text encoder first, then the usual `text_encoder.requires_grad_(False)` freeze runs, which also
freezes the new LoRA up/down weights. The UNet LoRA (added after its freeze) trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "text_encoder.layers[0].lora.up.weight"
EXPECT = "grad_none"


class LoRALinearLayer(nn.Module):
    def __init__(self, d_in, d_out, rank=4):
        super().__init__()
        self.down = nn.Linear(d_in, rank, bias=False)
        self.up = nn.Linear(rank, d_out, bias=False)
        nn.init.normal_(self.down.weight, std=1.0 / rank)
        nn.init.normal_(self.up.weight, std=0.02)

    def forward(self, x):
        return self.up(self.down(x))


class LinearWithLoRA(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.base = base
        self.lora = None

    def forward(self, x):
        out = self.base(x)
        return out if self.lora is None else out + self.lora(x)


class TextEncoder(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([LinearWithLoRA(nn.Linear(d, d)) for _ in range(2)])

    def forward(self, ids):
        h = self.embed(ids)
        for layer in self.layers:
            h = torch.tanh(layer(h))
        return h


class TinyUNet(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj_in = LinearWithLoRA(nn.Linear(d, d))
        self.to_k = LinearWithLoRA(nn.Linear(d, d))

    def forward(self, latents, cond):
        h = self.proj_in(latents)
        attn = torch.softmax(h @ self.to_k(cond).transpose(1, 2) / 4.0, dim=-1)
        return attn @ cond


def add_lora(module_list, rank=4):
    params = []
    for m in module_list:
        m.lora = LoRALinearLayer(m.base.in_features, m.base.out_features, rank)
        params += list(m.lora.parameters())
    return params


def run():
    torch.manual_seed(0)
    text_encoder, unet = TextEncoder(), TinyUNet()
    args = {"train_text_encoder": True, "rank": 4}
    te_params = add_lora(text_encoder.layers, args["rank"]) if args["train_text_encoder"] else []
    text_encoder.requires_grad_(False)  # <-- CUT
    unet.requires_grad_(False)
    unet_params = add_lora([unet.proj_in, unet.to_k], args["rank"])
    opt = torch.optim.AdamW(unet_params + te_params, lr=1e-4)

    ids = torch.randint(0, 50, (2, 6))
    latents, noise = torch.randn(2, 5, 16), torch.randn(2, 5, 16)
    pred = unet(latents, text_encoder(ids))
    loss = F.mse_loss(pred, noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"text_encoder": text_encoder, "unet": unet, "loss": loss}
