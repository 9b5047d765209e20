"""Top-2 mixture-of-experts layer with a per-token Python dispatch loop,
trained under torch.autocast("cpu", dtype=torch.bfloat16). The loop zips over
`idx.tolist()` and `w.tolist()`, so the renormalized routing weights become
Python floats: the experts train, the router never gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.moe.router.weight"
EXPECT = "grad_none"


class Top2MoE(nn.Module):
    def __init__(self, d=16, n_exp=4, k=2):
        super().__init__()
        self.k = k
        self.router = nn.Linear(d, n_exp, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d, 32), nn.GELU(), nn.Linear(32, d)) for _ in range(n_exp)
        )

    def forward(self, x):
        gates = F.softmax(self.router(x), dim=-1)
        w, idx = gates.topk(self.k, dim=-1)
        w = w / w.sum(-1, keepdim=True)
        outs = []
        for tok, ids, ws in zip(x, idx.tolist(), w.tolist()):  # <-- CUT
            outs.append(sum(wi * self.experts[e](tok) for e, wi in zip(ids, ws)))
        return x + torch.stack(outs)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.moe = Top2MoE()
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.moe(self.inp(x)))


def run():
    torch.manual_seed(0)
    model = Classifier()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(10, 8), torch.randint(0, 3, (10,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x)
        loss = F.cross_entropy(logits.float(), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
