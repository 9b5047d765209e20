"""Multi-task recommender: a click head (BCE) and a purchase-count head. The
trainer casts the predicted counts to int64 "because counts are integers" before
the Poisson-style MSE, so the count head gets no gradient while the click head and
the shared embeddings train.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.count_head.weight"
EXPECT = "grad_none"


class MultiTaskRec(nn.Module):
    def __init__(self, n_users=30, n_items=40, d=8):
        super().__init__()
        self.user = nn.Embedding(n_users, d)
        self.item = nn.Embedding(n_items, d)
        self.shared = nn.Sequential(nn.Linear(2 * d, 16), nn.ReLU())
        self.click_head = nn.Linear(16, 1)
        self.count_head = nn.Linear(16, 1)

    def forward(self, u, i):
        h = self.shared(torch.cat([self.user(u), self.item(i)], -1))
        return self.click_head(h).squeeze(-1), F.softplus(self.count_head(h)).squeeze(-1)


class MultiTaskLoss:
    def __init__(self, w_count=0.5):
        self.w_count = w_count

    def __call__(self, click_logit, count_pred, clicked, bought):
        l_click = F.binary_cross_entropy_with_logits(click_logit, clicked)
        counts = count_pred.to(torch.int64)  # <-- CUT
        l_count = F.mse_loss(counts.float(), bought)
        return l_click + self.w_count * l_count


def run():
    torch.manual_seed(0)
    model = MultiTaskRec()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    u, i = torch.randint(0, 30, (24,)), torch.randint(0, 40, (24,))
    clicked = (torch.rand(24) > 0.5).float()
    bought = torch.poisson(torch.full((24,), 1.5)) * clicked
    click_logit, count_pred = model(u, i)
    loss = MultiTaskLoss()(click_logit, count_pred, clicked, bought)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
