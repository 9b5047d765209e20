"""Fine-tuning recipe "freeze the input embeddings, train everything else" on a
model whose LM head is weight-tied to the embedding. Freezing `wte.weight` also
freezes `lm_head.weight` (same Parameter), so the output projection never trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.lm_head.weight"
EXPECT = "grad_none"


class TinyLM(nn.Module):
    def __init__(self, vocab=40, d=16):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.block = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d), nn.GELU())
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, ids):
        h = self.wte(ids)
        h = h + self.block(h)
        return self.lm_head(h)


def run():
    torch.manual_seed(0)
    model = TinyLM()
    model.get_input_embeddings = lambda: model.wte
    model.get_input_embeddings().weight.requires_grad = False  # <-- CUT
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    ids = torch.randint(0, 40, (2, 7))
    logits = model(ids)
    loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
