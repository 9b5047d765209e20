"""Recommender trainer with callbacks. An on_after_backward callback, meant to
reset a gradient accumulator, calls optimizer.zero_grad() (set_to_none=True by
default) right after backward and before clipping and step(), so the embedding
grads are None when clipping and the optimizer read them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.user_emb.weight"
EXPECT = "grad_none"


class BPRModel(nn.Module):
    def __init__(self, n_users=30, n_items=50, d=8):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, d)
        self.item_emb = nn.Embedding(n_items, d)

    def forward(self, u, i_pos, i_neg):
        pu = self.user_emb(u)
        return (pu * self.item_emb(i_pos)).sum(-1), (pu * self.item_emb(i_neg)).sum(-1)


class GradAccumCallback:
    def __init__(self, every=1):
        self.every, self.count = every, 0

    def on_after_backward(self, trainer):
        self.count += 1
        if self.count % self.every == 0:
            trainer.opt.zero_grad()  # <-- CUT


class Trainer:
    def __init__(self, model, callbacks, max_norm=1.0):
        self.model, self.callbacks, self.max_norm = model, callbacks, max_norm
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-2)

    def fit_batch(self, u, ip, ineg):
        pos, neg = self.model(u, ip, ineg)
        loss = -F.logsigmoid(pos - neg).mean() + 1e-4 * self.model.user_emb(u).pow(2).sum()
        self.opt.zero_grad()
        loss.backward()
        for cb in self.callbacks:
            cb.on_after_backward(self)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = BPRModel()
    trainer = Trainer(model, [GradAccumCallback(every=1)])
    u = torch.randint(0, 30, (32,))
    loss = trainer.fit_batch(u, torch.randint(0, 50, (32,)), torch.randint(0, 50, (32,)))
    return {"model": model, "trainer": trainer, "loss": loss}
