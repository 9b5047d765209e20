"""Prototype classifier: every N steps refresh_prototypes() recomputes class prototypes
from a support set under torch.inference_mode() (copied from the eval code, where it was
used instead of no_grad for speed), including the trainable projection. The distance loss
only subtracts the prototypes, so nothing raises, but the projection gets no gradient.
Thread: discuss.pytorch.org/t/about-the-the-implementation-of-activation-checkpointing/167177
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.proj.weight"
EXPECT = "grad_none"


class ProtoNet(nn.Module):
    def __init__(self, d_in=10, d=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(d_in, 16), nn.ReLU())
        self.proj = nn.Linear(16, d)
        self.query_adapter = nn.Linear(16, d)

    def embed_support(self, x):
        return self.proj(self.backbone(x))

    def embed_query(self, x):
        return self.query_adapter(self.backbone(x))


class ProtoTrainer:
    def __init__(self, model, n_cls, refresh_every=50):
        self.model, self.n_cls, self.refresh_every = model, n_cls, refresh_every
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.protos = None

    def refresh_prototypes(self, support_x, support_y):
        with torch.inference_mode():
            emb = self.model.embed_support(support_x)  # <-- CUT
            self.protos = torch.stack([emb[support_y == c].mean(0) for c in range(self.n_cls)])

    def step(self, step_idx, support_x, support_y, qx, qy):
        if self.protos is None or step_idx % self.refresh_every == 0:
            self.refresh_prototypes(support_x, support_y)
        q = self.model.embed_query(qx)
        diff = q[:, None, :] - self.protos[None, :, :]
        logits = -(diff ** 2).sum(-1)
        loss = F.cross_entropy(logits, qy)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = ProtoNet()
    trainer = ProtoTrainer(model, n_cls=3)
    sx = torch.randn(9, 10)
    sy = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2, 2])
    qx, qy = torch.randn(6, 10), torch.tensor([0, 1, 2, 0, 1, 2])
    loss = trainer.step(0, sx, sy, qx, qy)
    return {"model": model, "trainer": trainer, "loss": loss}
