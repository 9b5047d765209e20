"""Matrix factorization with predictions clamped to the rating range [1, 5]. The embeddings
are initialised with std 0.01 and there is no global bias, so every dot product is ~0 and
falls below the clamp: the clamp passes zero gradient and the embedding grads are all zeros.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.user_factors.weight"
EXPECT = "grad_zero"


class ClampedMF(nn.Module):
    def __init__(self, n_users=8, n_items=9, k=5):
        super().__init__()
        self.user_factors = nn.Embedding(n_users, k)
        self.item_factors = nn.Embedding(n_items, k)
        nn.init.normal_(self.user_factors.weight, std=0.01)
        nn.init.normal_(self.item_factors.weight, std=0.01)

    def forward(self, u, i):
        dot = (self.user_factors(u) * self.item_factors(i)).sum(1)
        return torch.clamp(dot, 1.0, 5.0)  # <-- CUT


def run():
    torch.manual_seed(0)
    model = ClampedMF()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, weight_decay=0.0)
    u = torch.randint(0, 8, (24,))
    i = torch.randint(0, 9, (24,))
    r = torch.randint(1, 6, (24,)).float()
    loss = nn.functional.mse_loss(model(u, i), r)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
