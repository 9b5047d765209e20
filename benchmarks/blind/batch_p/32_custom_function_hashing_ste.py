"""Recommender with binary hash codes for fast retrieval. A custom straight-through
sign Function binarises the user embeddings, but its backward returns None for the
input instead of the straight-through gradient, so the user embedding table gets
no gradient while the item side trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.user_emb.weight"
EXPECT = "grad_none"


class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        mask = (x.abs() <= 1).float()
        return None  # <-- CUT


class HashRec(nn.Module):
    def __init__(self, n_users=30, n_items=50, bits=16):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, bits)
        self.item_emb = nn.Embedding(n_items, bits)

    def forward(self, u, i):
        bu = SignSTE.apply(torch.tanh(self.user_emb(u)))
        qi = torch.tanh(self.item_emb(i))
        return (bu * qi).sum(-1) / bu.shape[-1] ** 0.5


def run():
    torch.manual_seed(0)
    model = HashRec()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    u, i = torch.randint(0, 30, (32,)), torch.randint(0, 50, (32,))
    y = (torch.rand(32) > 0.5).float()
    loss = F.binary_cross_entropy_with_logits(model(u, i), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
