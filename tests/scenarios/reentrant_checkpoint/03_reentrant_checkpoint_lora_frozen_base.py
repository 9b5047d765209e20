"""LoRA fine-tune of a small transformer with `gradient_checkpointing` written as
`checkpoint(layer, h, use_reentrant=True)`. The base model (embeddings included)
is frozen, so h does not require grad and the LoRA adapters inside the
checkpointed layers get no gradient; only the classifier head trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layers[0].lora_B"
EXPECT = "grad_none"


class LoRALayer(nn.Module):
    def __init__(self, d=16, r=4):
        super().__init__()
        self.base = nn.Linear(d, d)
        self.lora_A = nn.Parameter(torch.randn(r, d) * 0.01)
        self.lora_B = nn.Parameter(torch.zeros(d, r))

    def forward(self, x):
        return F.gelu(self.base(x) + x @ self.lora_A.t() @ self.lora_B.t())


class Model(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.embed = nn.Embedding(50, d)
        self.layers = nn.ModuleList(LoRALayer(d) for _ in range(2))
        self.classifier = nn.Linear(d, 3)
        self.gradient_checkpointing = True

    def forward(self, ids):
        h = self.embed(ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = checkpoint(layer, h, use_reentrant=True)  # <-- CUT
            else:
                h = layer(h)
        return self.classifier(h[:, 0])


def run():
    torch.manual_seed(0)
    model = Model()
    for n, p in model.named_parameters():
        p.requires_grad = "lora_" in n or n.startswith("classifier")
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    ids, y = torch.randint(0, 50, (4, 6)), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
