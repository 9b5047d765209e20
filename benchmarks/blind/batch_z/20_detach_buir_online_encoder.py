"""RecBole#1766 (user re-implementing BUIR on RecBole, "the gradient disappeared"):
BUIR trains an online encoder plus predictor against a momentum (target) encoder
that is updated by EMA through `.data` and run under no_grad, both on purpose. The
stop-gradient was put on the online user embedding as well, so the online user table
never gets a gradient; only the predictor and the online item table train.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.online_user.weight"
EXPECT = "grad_none"

CONFIG = {"embedding_size": 8, "momentum": 0.995, "n_users": 15, "n_items": 25}


class BUIR(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config["embedding_size"]
        self.momentum = config["momentum"]
        self.online_user = nn.Embedding(config["n_users"], d)
        self.online_item = nn.Embedding(config["n_items"], d)
        self.target_user = nn.Embedding(config["n_users"], d)
        self.target_item = nn.Embedding(config["n_items"], d)
        self.predictor = nn.Linear(d, d)
        for o, t in ((self.online_user, self.target_user), (self.online_item, self.target_item)):
            t.weight.data.copy_(o.weight.data)
            t.weight.requires_grad = False

    @torch.no_grad()
    def _update_target(self):
        for o, t in ((self.online_user, self.target_user), (self.online_item, self.target_item)):
            t.weight.data = t.weight.data * self.momentum + o.weight.data * (1.0 - self.momentum)

    def calculate_loss(self, user, item):
        u_online = self.online_user(user).detach()  # <-- CUT
        i_online = self.online_item(item)
        with torch.no_grad():
            u_target = self.target_user(user)
            i_target = self.target_item(item)
        u_pred, i_pred = self.predictor(u_online), self.predictor(i_online)
        loss_ui = 2 - 2 * F.cosine_similarity(u_pred, i_target, dim=-1)
        loss_iu = 2 - 2 * F.cosine_similarity(i_pred, u_target, dim=-1)
        return (loss_ui + loss_iu).mean()


def run():
    torch.manual_seed(0)
    model = BUIR(CONFIG)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    user = torch.tensor([0, 2, 4, 6, 8])
    item = torch.tensor([1, 3, 5, 7, 9])
    loss = model.calculate_loss(user, item)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model._update_target()
    return {"model": model, "loss": loss, "train_loss": loss.item()}
