"""Control: prompt tuning. A learnable prompt embedding is prepended to frozen
token embeddings and fed through a frozen encoder; only the prompt is in the
optimizer. Backbone frozen with requires_grad_(False), tokens embedded under
no_grad - all intended; model.prompt.grad is nonzero.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.prompt"
EXPECT = "grad_ok"


class PromptModel(nn.Module):
    def __init__(self, vocab=20, d=8, n_prompt=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.encoder = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.head = nn.Linear(d, 2)
        self.prompt = nn.Parameter(torch.randn(n_prompt, d) * 0.1)

    def forward(self, tokens):
        with torch.no_grad():
            tok = self.embed(tokens)
        p = self.prompt.unsqueeze(0).expand(tokens.shape[0], -1, -1)
        h = self.encoder(torch.cat([p, tok], dim=1))
        return self.head(h.mean(dim=1))


def run():
    torch.manual_seed(0)
    model = PromptModel()
    for name, p in model.named_parameters():
        if name != "prompt":
            p.requires_grad_(False)
    opt = torch.optim.Adam([model.prompt], lr=1e-2)
    tokens = torch.randint(0, 20, (4, 6))
    y = torch.tensor([0, 1, 1, 0])
    loss = F.cross_entropy(model(tokens), y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
