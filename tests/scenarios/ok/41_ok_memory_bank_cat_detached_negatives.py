"""Control: contrastive step that concatenates live query similarities with similarities
to a detached memory bank, logs `.item()` accuracy, and updates the bank under no_grad.
Several benign cuts; the encoder still gets a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder.weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    encoder = nn.Linear(8, 4)
    opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
    bank = F.normalize(torch.randn(16, 4), dim=1)
    x = torch.randn(6, 8)
    q = F.normalize(encoder(x), dim=1)
    k = F.normalize(encoder(x + 0.05 * torch.randn_like(x)), dim=1).detach()
    logits = torch.cat([(q * k).sum(1, keepdim=True), q @ bank.detach().t()], dim=1) / 0.1
    labels = torch.zeros(6, dtype=torch.long)
    loss = F.cross_entropy(logits, labels)  # <-- CUT
    acc = (logits.argmax(1) == labels).float().mean().item()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        bank = torch.cat([k, bank[:-6]], dim=0)
    return {"encoder": encoder, "loss": loss, "acc": acc, "bank": bank}
