"""A hand-rolled LoRA Linear (peft-like `init_lora_weights` option) that, when asked to start as
an exact no-op, zero-initialises lora_A as well as lora_B. With A = 0 the input of lora_B is
all zeros, so lora_B.weight.grad is exactly zero (and A's grad is zero because B = 0): no training.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.q_proj.lora_B.weight"
EXPECT = "grad_zero"


class LoraLinear(nn.Module):
    def __init__(self, base, r=4, alpha=8, init_lora_weights="identity"):
        super().__init__()
        self.base = base
        self.base.requires_grad_(False)
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        self.scaling = alpha / r
        self.reset_lora_parameters(init_lora_weights)

    def reset_lora_parameters(self, init_lora_weights):
        if init_lora_weights == "gaussian":
            nn.init.normal_(self.lora_A.weight, std=1.0 / self.lora_A.out_features)
        elif init_lora_weights == "identity":
            nn.init.zeros_(self.lora_A.weight)  # <-- CUT
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


class TinyAttention(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.q_proj = LoraLinear(nn.Linear(d, d))
        self.v_proj = LoraLinear(nn.Linear(d, d))
        self.out = nn.Linear(d, 4)
        self.out.requires_grad_(False)

    def forward(self, x):
        attn = torch.softmax(self.q_proj(x) @ x.transpose(1, 2) / 4.0, dim=-1)
        return self.out((attn @ self.v_proj(x)).mean(1))


def run():
    torch.manual_seed(0)
    model = TinyAttention()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    x, y = torch.randn(4, 5, 16), torch.tensor([0, 1, 2, 3])
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
