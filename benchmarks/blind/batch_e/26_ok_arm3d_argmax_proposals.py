"""Control (lanlan96/ARM3D#1): the relation module picks the most object-like
proposal with torch.argmax over objectness scores, and the asker notes argmax cannot
backpropagate. The authors explain that the objectness module learns from its own
objectness loss; the selection only feeds the later relation branch. The objectness
head's gradient is fine.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.objectness_head.weight"
EXPECT = "grad_ok"


class ProposalNet(nn.Module):
    def __init__(self, d=16, n_cls=5):
        super().__init__()
        self.point_enc = nn.Sequential(nn.Linear(3, d), nn.ReLU(), nn.Linear(d, d))
        self.objectness_head = nn.Linear(d, 2)
        self.relation = nn.Linear(2 * d, d)
        self.sem_head = nn.Linear(d, n_cls)

    def forward(self, proposals):
        feats = self.point_enc(proposals).max(dim=2).values
        obj_logits = self.objectness_head(feats)
        idx_obj = torch.argmax(obj_logits[..., 1], dim=1)
        anchor = feats[torch.arange(feats.shape[0]), idx_obj].unsqueeze(1).expand_as(feats)
        rel = F.relu(self.relation(torch.cat([feats, anchor], -1)))
        return obj_logits, self.sem_head(rel)


def run():
    torch.manual_seed(0)
    model = ProposalNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    proposals = torch.randn(2, 6, 8, 3)
    obj_label = torch.randint(0, 2, (2, 6))
    sem_label = torch.randint(0, 5, (2, 6))
    opt.zero_grad()
    obj_logits, sem_logits = model(proposals)
    obj_loss = F.cross_entropy(obj_logits.flatten(0, 1), obj_label.flatten())  # <-- CUT
    sem_loss = F.cross_entropy(sem_logits.flatten(0, 1), sem_label.flatten())
    loss = obj_loss + sem_loss
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
