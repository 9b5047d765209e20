"""A logging line records the feature norm with `.item()`; the next line detaches the
features, copied from a probing notebook. The logging line is harmless, but the detach
means the encoder never receives a gradient.
"""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder[0].weight"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(5, 8), nn.ReLU())
    head = nn.Linear(8, 3)
    opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-3)
    x, y = torch.randn(10, 5), torch.randint(0, 3, (10,))
    log = {}
    feats = encoder(x)
    log["feat_norm"] = feats.norm(dim=1).mean().item()
    feats = feats.detach()  # <-- CUT
    loss = nn.functional.cross_entropy(head(feats), y)
    log["loss"] = loss.item()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"encoder": encoder, "head": head, "loss": loss, "log": log}
