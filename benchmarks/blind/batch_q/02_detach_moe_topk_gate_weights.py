"""Sparse mixture-of-experts with a top-2 gate. The user detaches the renormalised
top-k gate values ("the indices are discrete anyway") when combining expert
outputs. The experts train, but the router gets no gradient from the task loss
and there is no auxiliary balance loss in this config.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.moe.router.weight"
EXPECT = "grad_none"

CONFIG = {"n_experts": 4, "top_k": 2, "aux_loss_weight": 0.0, "d": 8}


class TopKMoE(nn.Module):
    def __init__(self, d, n_experts, k):
        super().__init__()
        self.k = k
        self.router = nn.Linear(d, n_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d)) for _ in range(n_experts))

    def forward(self, x):
        logits = self.router(x)
        vals, idx = logits.topk(self.k, dim=-1)
        gates = F.softmax(vals, dim=-1)
        gates = gates.detach()  # <-- CUT
        out = torch.zeros_like(x)
        for slot in range(self.k):
            for e, expert in enumerate(self.experts):
                sel = idx[:, slot] == e
                if sel.any():
                    out[sel] = out[sel] + gates[sel, slot:slot + 1] * expert(x[sel])
        aux = logits.softmax(-1).mean(0).pow(2).sum() * len(self.experts)
        return out, aux


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm = nn.LayerNorm(cfg["d"])
        self.moe = TopKMoE(cfg["d"], cfg["n_experts"], cfg["top_k"])
        self.head = nn.Linear(cfg["d"], 3)

    def forward(self, x):
        h, aux = self.moe(self.norm(x))
        return self.head(x + h), aux


def run():
    torch.manual_seed(0)
    model = Block(CONFIG)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(16, CONFIG["d"])
    y = torch.randint(0, 3, (16,))
    logits, aux = model(x)
    loss = F.cross_entropy(logits, y)
    if CONFIG["aux_loss_weight"] > 0:
        loss = loss + CONFIG["aux_loss_weight"] * aux
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
