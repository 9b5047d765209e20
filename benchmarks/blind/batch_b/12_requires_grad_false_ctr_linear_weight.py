"""DeepCTR-Torch style BaseModel (shenweichen/DeepCTR-Torch#61, "so that
self.weight is registered to torch model parameters"): the dense-feature weight
of the linear part is a plain torch.Tensor filled with normal_(), so it is
not a parameter and never learns: model.linear_model.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.linear_model.weight"
EXPECT = "grad_none"


class Linear(nn.Module):
    def __init__(self, n_sparse_vocab=20, n_dense=4, init_std=1e-4):
        super().__init__()
        self.embedding = nn.Embedding(n_sparse_vocab, 1)
        self.weight = torch.Tensor(n_dense, 1)  # <-- CUT
        torch.nn.init.normal_(self.weight, mean=0, std=init_std)

    def forward(self, sparse_ids, dense_values):
        sparse_logit = self.embedding(sparse_ids).sum(dim=1)
        dense_logit = dense_values.matmul(self.weight)
        return sparse_logit + dense_logit


class DeepFM(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_model = Linear()
        self.dnn = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, sparse_ids, dense_values):
        return torch.sigmoid(self.linear_model(sparse_ids, dense_values) + self.dnn(dense_values))


def run():
    torch.manual_seed(0)
    model = DeepFM()
    optim = torch.optim.Adagrad(model.parameters(), lr=0.01)
    sparse_ids = torch.randint(0, 20, (16, 3))
    dense_values = torch.randn(16, 4)
    y = (torch.rand(16, 1) > 0.5).float()
    y_pred = model(sparse_ids, dense_values)
    loss = F.binary_cross_entropy(y_pred, y)
    optim.zero_grad()
    loss.backward()
    optim.step()
    return {"model": model, "loss": loss}
