"""LoRA wrapper that skips the adapter when its scaling is zero. scaling is
computed as lora_alpha // r (integer division), so alpha=8, r=16 gives 0 and
every LoRALinear returns the frozen base output: lora_A/lora_B grads are None.
The trainable classifier head keeps backward working.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].lora_A.weight"
EXPECT = "grad_none"

LORA_CFG = {"r": 16, "lora_alpha": 8}


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = alpha // r

    def forward(self, x):
        if self.scaling == 0:
            return self.base(x)  # <-- CUT
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(16, 16) for _ in range(2)])
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        for b in self.blocks:
            x = F.gelu(b(x))
        return self.head(x)


def run():
    torch.manual_seed(0)
    model = Model()
    model.requires_grad_(False)
    model.blocks = nn.ModuleList([LoRALinear(b, **{"r": LORA_CFG["r"], "alpha": LORA_CFG["lora_alpha"]})
                                  for b in model.blocks])
    model.head.requires_grad_(True)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
