"""Hand-written prefix tuning for a GPT-style block: learnable prefix keys/values are
passed as `past_key_values`. The model "detaches the cache like generate() does"
when it builds the cache tuple, so the prefix parameters never get a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.prefix_k"
EXPECT = "grad_none"


class Attention(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x, layer_past=None):
        q, k, v = self.q(x), self.k(x), self.v(x)
        if layer_past is not None:
            pk, pv = layer_past
            k, v = torch.cat([pk, k], 1), torch.cat([pv, v], 1)
        att = (q @ k.transpose(1, 2) / 4.0).softmax(-1)
        return self.o(att @ v), (k, v)


class PrefixModel(nn.Module):
    def __init__(self, d=16, n_prefix=3):
        super().__init__()
        self.wte = nn.Embedding(30, d)
        self.attn = Attention(d)
        self.head = nn.Linear(d, 30)
        self.prefix_k = nn.Parameter(torch.randn(1, n_prefix, d) * 0.1)
        self.prefix_v = nn.Parameter(torch.randn(1, n_prefix, d) * 0.1)

    def get_prompt(self, bsz):
        k = self.prefix_k.expand(bsz, -1, -1)
        v = self.prefix_v.expand(bsz, -1, -1)
        return tuple(t.detach() for t in (k, v))  # <-- CUT

    def forward(self, ids):
        past_key_values = self.get_prompt(ids.shape[0])
        h, present = self.attn(self.wte(ids), layer_past=past_key_values)
        return {"logits": self.head(h), "past_key_values": present}


def run():
    torch.manual_seed(0)
    model = PrefixModel()
    for n, p in model.named_parameters():
        p.requires_grad_(n.startswith("prefix") or n.startswith("head"))
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    ids = torch.randint(0, 30, (2, 6))
    out = model(ids)
    loss = F.cross_entropy(out["logits"][:, :-1].reshape(-1, 30), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "out": out, "loss": loss}
