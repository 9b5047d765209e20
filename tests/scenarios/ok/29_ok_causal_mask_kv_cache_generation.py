"""Control: decoder-only LM with a causal mask built from a comparison
(`arange[:, None] < arange[None, :]`) and masked_fill; after the training step a
sample is generated with a detached past_key_values cache under no_grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.qkv.weight"
EXPECT = "grad_ok"


class Decoder(nn.Module):
    def __init__(self, vocab=30, d=16):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.qkv = nn.Linear(d, 3 * d)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, ids, past_key_values=None):
        q, k, v = self.qkv(self.wte(ids)).chunk(3, -1)
        if past_key_values is not None:
            k = torch.cat([past_key_values[0], k], 1)
            v = torch.cat([past_key_values[1], v], 1)
        T, S = q.shape[1], k.shape[1]
        i = torch.arange(T)[:, None] + (S - T)
        mask = i < torch.arange(S)[None, :]
        scores = (q @ k.transpose(1, 2) / 4.0).masked_fill(mask, float("-inf"))
        h = scores.softmax(-1) @ v
        return self.lm_head(h), (k.detach(), v.detach())


def run():
    torch.manual_seed(0)
    model = Decoder()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 30, (2, 8))
    logits, _ = model(ids)
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten())  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        out, past = model(ids[:1, :4])
        nxt = out[:, -1].argmax(-1, keepdim=True)
        out, past = model(nxt, past_key_values=past)
    return {"model": model, "loss": loss, "nxt": nxt}
