"""Matrix factorization with a custom straight-through quantizer `Quantize.apply(x, step)`.
Its backward returns the gradients in the wrong order (None for x, the STE grad for the
step tensor, a buffer), so nothing reaches the embeddings: their .grad stays None.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.user_emb.weight"
EXPECT = "grad_none"


class Quantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step):
        return torch.round(x / step) * step

    @staticmethod
    def backward(ctx, grad_output):
        return None, grad_output  # <-- CUT


class QuantMF(nn.Module):
    def __init__(self, n_users=6, n_items=7, k=4):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, k)
        self.item_emb = nn.Embedding(n_items, k)
        self.global_bias = nn.Parameter(torch.tensor(3.0))
        self.register_buffer("step", torch.tensor(0.5))

    def forward(self, u, i):
        raw = (self.user_emb(u) * self.item_emb(i)).sum(1)
        return self.global_bias + Quantize.apply(raw, self.step)


def run():
    torch.manual_seed(0)
    model = QuantMF()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    u = torch.randint(0, 6, (20,))
    i = torch.randint(0, 7, (20,))
    r = torch.randint(1, 6, (20,)).float()
    loss = ((model(u, i) - r) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
