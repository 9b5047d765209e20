"""Prompt tuning with a gradient hook meant to keep the first n_fixed prompt
tokens fixed. The mask is built as (positions < n_fixed) instead of >=, and
n_fixed equals the prompt length by config, so the hook zeroes the whole
gradient: prompt.grad exists but is all zeros.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.prompt"
EXPECT = "grad_zero"

CFG = {"n_prompt": 4, "n_fixed": 4}


class PromptModel(nn.Module):
    def __init__(self, vocab=30, dim=8, n_cls=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim).requires_grad_(False)
        self.body = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, n_cls)).requires_grad_(False)
        self.prompt = nn.Parameter(torch.randn(CFG["n_prompt"], dim) * 0.1)
        keep = (torch.arange(CFG["n_prompt"]) >= CFG["n_fixed"]).float()
        self.register_buffer("keep", keep[:, None])
        self.prompt.register_hook(self._mask_fixed)

    def _mask_fixed(self, grad):
        return grad * self.keep  # <-- CUT

    def forward(self, ids):
        e = self.embed(ids)
        h = torch.cat([self.prompt.expand(ids.shape[0], -1, -1), e], 1)
        return self.body(h.mean(1))


def run():
    torch.manual_seed(0)
    model = PromptModel()
    opt = torch.optim.Adam([model.prompt], lr=1e-2)
    ids, y = torch.randint(0, 30, (6, 5)), torch.randint(0, 3, (6,))
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
