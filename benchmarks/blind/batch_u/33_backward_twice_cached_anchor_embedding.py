"""Detection training loop that fails at the second iteration with "Trying to backward
through the graph a second time" (pytorch/pytorch#30297, loss_dict summed and
backpropagated every iteration): the RPN caches its anchor embeddings, computed once
through a learnable layer on the first call, and reuses the cached tensor (with its
already-freed graph) on every later iteration."""
import torch
import torch.nn as nn

CAUSE = "backward_twice"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class RPNHead(nn.Module):
    def __init__(self, n_anchors=6, d=8):
        super().__init__()
        self.anchor_table = nn.Parameter(torch.randn(n_anchors, 4))
        self.anchor_embed = nn.Linear(4, d)
        self.obj = nn.Linear(d, 1)
        self._cached = None

    def forward(self, feats):
        if self._cached is None:
            self._cached = self.anchor_embed(self.anchor_table)  # <-- CUT
        scores = self.obj(torch.tanh(feats[:, None, :] + self._cached[None]))
        return {"loss_objectness": scores.sigmoid().mean(), "loss_reg": scores.pow(2).mean()}


def run():
    torch.manual_seed(0)
    model = RPNHead()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data_loader = [torch.randn(2, 8) for _ in range(3)]
    for iteration, images in enumerate(data_loader, start=1):
        loss_dict = model(images)
        losses = sum(loss for loss in loss_dict.values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
    return {"model": model}
