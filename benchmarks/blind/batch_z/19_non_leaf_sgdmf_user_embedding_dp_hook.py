"""FederatedScope#779 (SGDMF on MovieLens): the private local-update hook reads a
gradient that does not exist and must use the embedding table's `.weight.grad`. Here
the model keeps the looked-up user rows as `self.user_vec` and the DP hook clips and
noises `model.user_vec.grad`; it is a non-leaf, so the grad is None and no noise is
ever added, while the embedding table itself is updated without DP.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.user_vec"
EXPECT = "grad_none"

CFG = {"num_user": 20, "num_item": 30, "dim": 4, "sgdmf": {"epsilon": 4.0, "R": 1.0}}


class MatrixFactorization(nn.Module):
    def __init__(self, num_user, num_item, dim):
        super().__init__()
        self.embed_user = nn.Embedding(num_user, dim)
        self.embed_item = nn.Embedding(num_item, dim)
        self.user_vec = None

    def forward(self, users, items):
        self.user_vec = self.embed_user(users)  # <-- CUT
        item_vec = self.embed_item(items)
        return (self.user_vec * item_vec).sum(-1)


class Ctx:
    pass


def hook_on_batch_backward(ctx):
    ctx.optimizer.zero_grad()
    ctx.loss_task.backward()
    grad = ctx.model.user_vec.grad
    if grad is not None:
        norm = grad.norm(dim=-1, keepdim=True).clamp(min=ctx.R)
        noisy = grad * (ctx.R / norm) + torch.randn_like(grad) * ctx.R / ctx.epsilon
        ctx.model.embed_user.weight.grad.index_copy_(0, ctx.users, noisy)
    ctx.optimizer.step()


def run():
    torch.manual_seed(0)
    ctx = Ctx()
    ctx.model = MatrixFactorization(CFG["num_user"], CFG["num_item"], CFG["dim"])
    ctx.optimizer = torch.optim.SGD(ctx.model.parameters(), lr=0.5)
    ctx.epsilon, ctx.R = CFG["sgdmf"]["epsilon"], CFG["sgdmf"]["R"]
    ctx.users = torch.tensor([0, 3, 5, 7])
    items = torch.tensor([1, 2, 9, 11])
    ratings = torch.tensor([4.0, 3.0, 5.0, 1.0])
    pred = ctx.model(ctx.users, items)
    ctx.loss_task = torch.mean((pred - ratings) ** 2)
    hook_on_batch_backward(ctx)
    return {"model": ctx.model, "ctx": ctx}
