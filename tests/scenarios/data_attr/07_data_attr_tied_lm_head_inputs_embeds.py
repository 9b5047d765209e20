"""Captioning decoder fed with `inputs_embeds` from a vision projector; the LM head
is "tied" to the token embedding by computing `h @ self.wte.weight.data.T`.
Because `.data` is read, the tied embedding matrix gets no gradient at all.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.wte.weight"
EXPECT = "grad_none"


class CaptionDecoder(nn.Module):
    def __init__(self, vocab=40, d=16):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.proj = nn.Linear(12, d)
        self.ln_f = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, d), nn.GELU())

    def forward(self, inputs_embeds=None, input_ids=None):
        if inputs_embeds is None:
            inputs_embeds = self.wte(input_ids)
        h = self.ln_f(inputs_embeds + self.mlp(inputs_embeds))
        logits = h @ self.wte.weight.data.t()  # <-- CUT
        return {"logits": logits, "last_hidden_state": h}


def run():
    torch.manual_seed(0)
    model = CaptionDecoder()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    img_feats = torch.randn(2, 5, 12)
    labels = torch.randint(0, 40, (2, 5))
    out = model(inputs_embeds=model.proj(img_feats))
    loss = F.cross_entropy(out["logits"].flatten(0, 1), labels.flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "out": out, "loss": loss}
