"""LoRA text-to-image script (huggingface/diffusers#2245 added
unet.requires_grad_(False) "to save memory"): in a refactor the LoRA attention
processors are attached before the freeze call, so requires_grad_(False) also
freezes them. Nothing in the graph requires grad and loss.backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class LoRALinearLayer(nn.Module):
    def __init__(self, d_in, d_out, rank=4):
        super().__init__()
        self.down = nn.Linear(d_in, rank, bias=False)
        self.up = nn.Linear(rank, d_out, bias=False)
        nn.init.normal_(self.down.weight, std=1 / rank)
        nn.init.normal_(self.up.weight, std=0.01)

    def forward(self, h):
        return self.up(self.down(h))


class LoRAAttnProcessor(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.to_q_lora = LoRALinearLayer(d, d)

    def __call__(self, attn, h):
        q = attn.to_q(h) + self.to_q_lora(h)
        k, v = attn.to_k(h), attn.to_v(h)
        w = torch.softmax(q @ k.transpose(1, 2) / q.shape[-1] ** 0.5, dim=-1)
        return w @ v


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.to_q, self.to_k, self.to_v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.processor = None

    def forward(self, h):
        return self.processor(self, h)


class TinyUNet(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj_in = nn.Linear(4, d)
        self.attn = Attention(d)
        self.proj_out = nn.Linear(d, 4)

    def set_attn_processor(self, proc):
        self.attn.processor = proc

    def forward(self, x):
        h = self.proj_in(x)
        return self.proj_out(h + self.attn(h))


def main():
    unet = TinyUNet()
    lora_attn_procs = LoRAAttnProcessor(16)
    unet.set_attn_processor(lora_attn_procs)
    # freeze parameters of models to save more memory
    unet.requires_grad_(False)  # <-- CUT
    optimizer = torch.optim.AdamW(lora_attn_procs.parameters(), lr=1e-4)
    latents = torch.randn(2, 6, 4)
    noise = torch.randn_like(latents)
    model_pred = unet(latents + noise)
    loss = F.mse_loss(model_pred, noise)
    loss.backward()
    optimizer.step()
    return unet, loss


def run():
    torch.manual_seed(0)
    unet, loss = main()
    return {"unet": unet, "loss": loss}
