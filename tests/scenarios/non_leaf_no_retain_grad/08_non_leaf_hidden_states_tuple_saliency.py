"""Token attribution with a hand-written encoder that returns a dict with
`output_hidden_states`. The user reads `out["hidden_states"][0].grad` after
backward; the embedding output is a non-leaf and retain_grad() was never called.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "out['hidden_states'][0]"
EXPECT = "grad_none"


class Encoder(nn.Module):
    def __init__(self, vocab=30, d=16, n=2):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(nn.Sequential(nn.Linear(d, d), nn.Tanh()) for _ in range(n))
        self.pooler = nn.Linear(d, 2)

    def forward(self, ids, output_hidden_states=False):
        h = self.embeddings(ids)  # <-- CUT
        all_hidden = (h,)
        for layer in self.layers:
            h = h + layer(h)
            all_hidden = all_hidden + (h,)
        out = {"logits": self.pooler(h[:, 0])}
        if output_hidden_states:
            out["hidden_states"] = all_hidden
        return out


def run():
    torch.manual_seed(0)
    model = Encoder()
    ids, y = torch.randint(0, 30, (1, 6)), torch.tensor([1])
    out = model(ids, output_hidden_states=True)
    loss = F.cross_entropy(out["logits"], y)
    model.zero_grad()
    loss.backward()
    saliency = out["hidden_states"][0].grad
    return {"model": model, "out": out, "saliency": saliency}
