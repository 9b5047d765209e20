"""Control (TinyZeaMays/CircleLoss#28): Circle loss detaches sp and sn when it
builds the self-paced weights ap = clamp_min(-sp.detach() + 1 + m, 0). The user
asks whether this cuts the gradient; it only makes the weights constants, and
the embedding network still gets a normal gradient through sp and sn.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model[0].weight"
EXPECT = "grad_ok"


def convert_label_to_similarity(normed_feature, label):
    similarity_matrix = normed_feature @ normed_feature.t()
    label_matrix = label.unsqueeze(1) == label.unsqueeze(0)
    positive_matrix = label_matrix.triu(diagonal=1)
    negative_matrix = label_matrix.logical_not().triu(diagonal=1)
    similarity_matrix = similarity_matrix.view(-1)
    return similarity_matrix[positive_matrix.view(-1)], similarity_matrix[negative_matrix.view(-1)]


class CircleLoss(nn.Module):
    def __init__(self, m=0.25, gamma=64.0):
        super().__init__()
        self.m, self.gamma = m, gamma

    def forward(self, sp, sn):
        ap = torch.clamp_min(-sp.detach() + 1 + self.m, min=0.0)
        an = torch.clamp_min(sn.detach() + self.m, min=0.0)
        delta_p, delta_n = 1 - self.m, self.m
        logit_p = -ap * (sp - delta_p) * self.gamma
        logit_n = an * (sn - delta_n) * self.gamma
        return F.softplus(torch.logsumexp(logit_n, dim=0) + torch.logsumexp(logit_p, dim=0))  # <-- CUT


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9, weight_decay=1e-5)
    criterion = CircleLoss(m=0.25, gamma=80)
    img = torch.randn(8, 10)
    label = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    pred = F.normalize(model(img))
    loss = criterion(*convert_label_to_similarity(pred, label))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
