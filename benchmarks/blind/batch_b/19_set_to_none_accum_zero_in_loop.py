"""Gradient accumulation with zero_grad in the wrong place (the UNICORN-MAML
question, Han-Jia/UNICORN-MAML#7, "zero_grad after backward?"): the refactored loop
calls optimizer.zero_grad() right after each micro-batch backward(), so when
clip_grad_norm_ and step() run, model.encoder.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder.weight"
EXPECT = "grad_none"


class ProtoNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(10, 16)

    def forward(self, support, query, n_way):
        s = self.encoder(support).view(n_way, -1, 16).mean(1)
        q = self.encoder(query)
        return -torch.cdist(q, s)


def train_epoch(model, optimizer, episodes, n_way=3, accum=2):
    for i, (support, query, labels) in enumerate(episodes):
        logits = model(support, query, n_way)
        loss = F.cross_entropy(logits, labels) / accum
        loss.backward()
        optimizer.zero_grad()  # <-- CUT
        if (i + 1) % accum == 0:
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            optimizer.step()
    return loss, grad_norm


def run():
    torch.manual_seed(0)
    model = ProtoNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    episodes = [(torch.randn(6, 10), torch.randn(9, 10), torch.arange(3).repeat_interleave(3)) for _ in range(2)]
    loss, grad_norm = train_epoch(model, optimizer, episodes)
    return {"model": model, "loss": loss, "grad_norm": grad_norm}
