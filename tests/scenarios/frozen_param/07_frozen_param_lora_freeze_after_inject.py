"""LoRA fine-tuning: adapters are injected into the attention projections and
only then is the base model frozen with `model.requires_grad_(False)`, which
freezes the freshly added lora_A / lora_B too. The classification head is
unfrozen again, so training runs, but the adapters never get a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].q.lora_B"
EXPECT = "grad_none"


class LoRALinear(nn.Module):
    def __init__(self, base, r=4, alpha=8.0):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scale


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)

    def forward(self, x):
        att = torch.softmax(self.q(x) @ self.k(x).transpose(1, 2) / x.shape[-1] ** 0.5, dim=-1)
        return x + att @ self.v(x)


class Encoder(nn.Module):
    def __init__(self, d=16, n_cls=3):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d), Block(d)])
        self.head = nn.Linear(d, n_cls)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.head(x.mean(dim=1))


def add_lora(model):
    for blk in model.blocks:
        blk.q = LoRALinear(blk.q)
        blk.v = LoRALinear(blk.v)


def run():
    torch.manual_seed(0)
    model = Encoder()
    add_lora(model)
    model.requires_grad_(False)  # <-- CUT
    model.head.requires_grad_(True)
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=1e-3)
    x = torch.randn(4, 6, 16)
    y = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
