"""Lightning DINO port: student_backbone = encoder; self.teacher_backbone = encoder
(same object, no deepcopy), then the teacher is frozen with requires_grad = False.
That freezes the student backbone too; only the student head trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.student_backbone[0].weight"
EXPECT = "grad_none"


def make_encoder():
    return nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Linear(32, 16))


class DINOModel(nn.Module):
    def __init__(self, encoder, out_dim=12):
        super().__init__()
        self.student_backbone = encoder
        self.teacher_backbone = encoder
        self.student_head = nn.Linear(16, out_dim)
        self.teacher_head = nn.Linear(16, out_dim)
        self.teacher_head.load_state_dict(self.student_head.state_dict())
        for p in list(self.teacher_backbone.parameters()) + list(self.teacher_head.parameters()):
            p.requires_grad = False  # <-- CUT

    def forward_student(self, x):
        return self.student_head(self.student_backbone(x))

    @torch.no_grad()
    def forward_teacher(self, x):
        return self.teacher_head(self.teacher_backbone(x))


def run():
    torch.manual_seed(0)
    model = DINOModel(make_encoder())
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    x1, x2 = torch.randn(8, 10), torch.randn(8, 10)
    t = F.softmax(model.forward_teacher(x1) / 0.04, dim=-1)
    s = F.log_softmax(model.forward_student(x2) / 0.1, dim=-1)
    loss = -(t * s).sum(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
