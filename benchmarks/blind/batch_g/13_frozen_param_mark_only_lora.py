"""loralib workflow: the training script first freezes the whole backbone with a
generic `freeze(model)` helper, then calls mark_only_lora_as_trainable(model).
That function only sets requires_grad=False on non-LoRA params and never sets
True on the lora_ ones, so the LoRA matrices stay frozen and get no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[1].attn.lora_A"
EXPECT = "grad_none"


class LoRALinear(nn.Linear):
    def __init__(self, in_f, out_f, r=4, lora_alpha=8):
        super().__init__(in_f, out_f)
        self.lora_A = nn.Parameter(torch.zeros(r, in_f))
        self.lora_B = nn.Parameter(torch.zeros(out_f, r))
        nn.init.kaiming_uniform_(self.lora_A, a=5 ** 0.5)
        nn.init.normal_(self.lora_B, std=0.02)
        self.scaling = lora_alpha / r

    def forward(self, x):
        return F.linear(x, self.weight, self.bias) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


class EncoderLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attn = LoRALinear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        return self.ln(x + self.attn(x) + self.ff(x))


def mark_only_lora_as_trainable(model: nn.Module, bias: str = "none") -> None:
    for n, p in model.named_parameters():
        if "lora_" not in n:
            p.requires_grad = False
    if bias == "all":
        for n, p in model.named_parameters():
            if "bias" in n:
                p.requires_grad = True


def freeze(module):
    for p in module.parameters():
        p.requires_grad = False  # <-- CUT


def run():
    torch.manual_seed(0)
    d = 16
    model = nn.Module()
    model.encoder = nn.Sequential(EncoderLayer(d), EncoderLayer(d))
    model.classifier = nn.Linear(d, 4)

    freeze(model.encoder)                 # "keep the pretrained encoder fixed"
    mark_only_lora_as_trainable(model.encoder)
    optimizer = torch.optim.AdamW(
        [p for p in model.encoder.parameters() if p.requires_grad] + list(model.classifier.parameters()),
        lr=1e-3,
    )

    x = torch.randn(6, 5, d)
    y = torch.tensor([0, 1, 2, 3, 0, 1])
    logits = model.classifier(model.encoder(x).mean(1))
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
