"""Fine-tuning an embedding model with freeze=True (jina-ai/finetuner#435): the
tailor step freezes every backbone parameter and is supposed to attach a new
trainable projection head, but that only happens when output_dim is given. Without
it nothing requires grad and loss.backward() raises "element 0 of tensors does not
require grad and does not have a grad_fn".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


def resnet_like(d=16):
    return nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, d, 3, 2, 1), nn.BatchNorm2d(d), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten())


def to_embedding_model(model, freeze=False, output_dim=None, feat_dim=16):
    if freeze:
        for name, param in model.named_parameters():
            param.requires_grad = False  # <-- CUT
    if output_dim is not None:
        model = nn.Sequential(model, nn.Linear(feat_dim, output_dim))
    return model


def triplet_loss(anchor, pos, neg, margin=1.0):
    d_ap = F.pairwise_distance(anchor, pos)
    d_an = F.pairwise_distance(anchor, neg)
    return F.relu(d_ap - d_an + margin).mean()


def fit(model, batches, lr=1e-3):
    params = [p for p in model.parameters()]
    optimizer = torch.optim.Adam(params, lr=lr)
    model.train()
    for a, p, n in batches:
        optimizer.zero_grad()
        loss = triplet_loss(model(a), model(p), model(n))
        loss.backward()
        optimizer.step()
    return loss


def run():
    torch.manual_seed(0)
    backbone = resnet_like()
    model = to_embedding_model(backbone, freeze=True)
    a, p, n = (torch.randn(4, 3, 16, 16) for _ in range(3))
    loss = fit(model, [(a, p, n)])
    return {"model": model, "loss": loss}
