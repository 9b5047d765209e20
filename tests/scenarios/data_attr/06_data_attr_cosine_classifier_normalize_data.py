"""Cosine-softmax (NormFace-style) classifier head: the forward L2-normalises the
class weights with `F.normalize(self.weight.data, dim=1)` copied from a repo that
did the normalisation as an in-place weight update. Using `.data` in the forward
means the class weights never get a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.head.weight"
EXPECT = "grad_none"


class CosineHead(nn.Module):
    def __init__(self, in_features, n_classes, s=16.0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_classes, in_features))
        self.s = s

    def forward(self, x):
        w = F.normalize(self.weight.data, dim=1)  # <-- CUT
        return self.s * F.linear(F.normalize(x, dim=1), w)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(20, 32), nn.ReLU())
        self.head = CosineHead(32, 5)

    def forward(self, x):
        return self.head(self.body(x))


def run():
    torch.manual_seed(0)
    model = Model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(10, 20), torch.randint(0, 5, (10,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
