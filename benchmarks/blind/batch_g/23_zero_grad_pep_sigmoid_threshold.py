"""PEP (learnable embedding sizes) in a CTR model: the soft threshold is
sign(v) * relu(|v| - sigmoid(s)) with the threshold logit s initialised to -150
as in the example config. sigmoid(-150) underflows to 0 in float32, so its
derivative is exactly 0 and s gets an all-zero gradient: it never trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "zero_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.embedding.s"
EXPECT = "grad_zero"


class PEPEmbedding(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.field_dims = opt["field_dims"]
        self.latent_dim = opt["latent_dim"]
        self.threshold_type = opt["threshold_type"]
        self.g = torch.sigmoid
        self.v = nn.Parameter(torch.empty(sum(self.field_dims), self.latent_dim))
        nn.init.xavier_uniform_(self.v)
        self.s = nn.Parameter(self.init_threshold(opt["threshold_init"]))
        self.offsets = torch.tensor([0] + list(self.field_dims[:-1])).cumsum(0)

    def init_threshold(self, init):
        if self.threshold_type == "global":
            return init * torch.ones(1)
        if self.threshold_type == "dimension":
            return init * torch.ones([self.latent_dim])
        if self.threshold_type == "feature":
            return init * torch.ones([sum(self.field_dims), 1])
        return init * torch.ones([sum(self.field_dims), self.latent_dim])

    def soft(self, v):
        threshold = self.g(self.s)  # <-- CUT
        return torch.sign(v) * torch.relu(torch.abs(v) - threshold)

    def forward(self, x):
        x = x + self.offsets.unsqueeze(0)
        self.sparse_v = self.soft(self.v)
        return F.embedding(x, self.sparse_v)


class FM(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.embedding = PEPEmbedding(opt)
        self.linear = nn.Embedding(sum(opt["field_dims"]), 1)
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        emb = self.embedding(x)
        lin = self.linear(x + self.embedding.offsets.unsqueeze(0)).sum(1)
        square_of_sum = emb.sum(1) ** 2
        sum_of_square = (emb ** 2).sum(1)
        return (lin + self.bias + 0.5 * (square_of_sum - sum_of_square).sum(1, keepdim=True)).squeeze(1)


def run():
    torch.manual_seed(0)
    opt = {"field_dims": [5, 7, 4], "latent_dim": 8, "threshold_type": "feature_dim", "threshold_init": -150.0}
    model = FM(opt)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.stack([torch.randint(0, d, (16,)) for d in opt["field_dims"]], 1)
    y = torch.randint(0, 2, (16,)).float()
    loss = F.binary_cross_entropy_with_logits(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
