"""Reproduces abhuse/polyloss-pytorch#4: the README example for the Poly-1 cross-entropy loss
builds random logits with `torch.rand([batch_size, num_classes])` and calls loss.backward();
nothing in the graph requires grad, so backward raises "element 0 of tensors does not require
grad and does not have a grad_fn". The fix is `requires_grad=True` on the logits.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Poly1CrossEntropyLoss(nn.Module):
    def __init__(self, num_classes, epsilon=1.0, reduction="none", weight=None):
        super().__init__()
        self.num_classes = num_classes
        self.epsilon = epsilon
        self.reduction = reduction
        self.weight = weight

    def forward(self, logits, labels):
        labels_onehot = F.one_hot(labels, num_classes=self.num_classes).to(device=logits.device,
                                                                           dtype=logits.dtype)
        pt = torch.sum(labels_onehot * F.softmax(logits, dim=-1), dim=-1)
        ce = F.cross_entropy(logits, labels, reduction="none", weight=self.weight)
        poly1 = ce + self.epsilon * (1 - pt)
        if self.reduction == "mean":
            poly1 = poly1.mean()
        elif self.reduction == "sum":
            poly1 = poly1.sum()
        return poly1


def run():
    torch.manual_seed(0)
    batch_size, num_classes = 10, 5
    logits = torch.rand([batch_size, num_classes])  # <-- CUT
    labels = torch.randint(0, num_classes, [batch_size])
    loss = Poly1CrossEntropyLoss(num_classes=num_classes, reduction="mean")(logits, labels)
    loss.backward()
    return {"logits": logits, "labels": labels, "loss": loss}
