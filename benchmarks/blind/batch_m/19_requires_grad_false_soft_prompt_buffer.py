"""Prompt tuning on a small transformer encoder: learnable soft-prompt vectors are
prepended to the token embeddings. The prompt was stored with register_buffer (so
that it moves with .to() and is saved in the state_dict), which makes it a tensor
without requires_grad; the encoder and head train, the prompt's .grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.prompt"
EXPECT = "grad_none"


class PromptTunedEncoder(nn.Module):
    def __init__(self, vocab=100, d=32, n_prompt=4, n_cls=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.register_buffer("prompt", torch.randn(n_prompt, d) * 0.02)  # <-- CUT
        layer = nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)
        self.head = nn.Linear(d, n_cls)

    def forward(self, ids):
        x = self.embed(ids)
        p = self.prompt.unsqueeze(0).expand(ids.size(0), -1, -1)
        h = self.encoder(torch.cat([p, x], dim=1))
        return self.head(h[:, 0])


def run():
    torch.manual_seed(0)
    model = PromptTunedEncoder()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids, y = torch.randint(0, 100, (4, 10)), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
