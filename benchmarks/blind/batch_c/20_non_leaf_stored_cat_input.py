"""Multi-view set encoder whose forward concatenates the view tensors and keeps the
result on the module (self.y = torch.cat(views)) so the gradient per view can be
inspected. self.y is a non-leaf created by cat, so after backward model.y.grad is None
while every input view gets its grad.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.y"
EXPECT = "grad_none"


class SetEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc0 = nn.Linear(3, 5)
        self.pool_proj = nn.Linear(5, 2)

    def forward(self, views):
        self.y = torch.cat(views)  # <-- CUT
        h = torch.tanh(self.fc0(self.y))
        return self.pool_proj(h.mean(dim=0, keepdim=True))


def run():
    torch.manual_seed(0)
    model = SetEncoder()
    views = [torch.tensor([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]]) * 0.1 * (i + 1) for i in range(3)]
    views = [v.requires_grad_() for v in views]
    output = model(views)
    output[0][0].backward()
    per_view = [v.grad.norm().item() for v in views]
    return {"model": model, "views": views, "output": output, "per_view": per_view}
