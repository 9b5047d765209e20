"""vit-pytorch DistillWrapper-style step: teacher logits come from a frozen CNN under
torch.no_grad(), its softmax is .detach()ed again inside the KL term, and the loss is
logged with .item(). The teacher is cut on purpose; the student ViT trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "wrapper.student.to_patch_embedding.weight"
EXPECT = "grad_ok"


class TinyViT(nn.Module):
    def __init__(self, num_classes=5, dim=16):
        super().__init__()
        self.to_patch_embedding = nn.Linear(12, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.transformer = nn.TransformerEncoderLayer(dim, 2, 32, dropout=0.0, batch_first=True)
        self.mlp_head = nn.Linear(dim, num_classes)

    def forward(self, img, distill_token=None):
        x = self.to_patch_embedding(img.unfold(2, 2, 2).unfold(3, 2, 2).permute(0, 2, 3, 1, 4, 5).flatten(3).flatten(1, 2))
        tokens = [self.cls_token.expand(x.shape[0], -1, -1), x]
        if distill_token is not None:
            tokens.append(distill_token.expand(x.shape[0], -1, -1))
        x = self.transformer(torch.cat(tokens, 1))
        return self.mlp_head(x[:, 0]), x[:, -1]


class DistillWrapper(nn.Module):
    def __init__(self, teacher, student, temperature=3.0, alpha=0.5, dim=16, num_classes=5):
        super().__init__()
        self.teacher, self.student = teacher, student
        self.temperature, self.alpha = temperature, alpha
        self.distillation_token = nn.Parameter(torch.randn(1, 1, dim))
        self.distill_mlp = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_classes))

    def forward(self, img, labels):
        with torch.no_grad():
            teacher_logits = self.teacher(img)
        student_logits, distill_tokens = self.student(img, self.distillation_token)
        distill_logits = self.distill_mlp(distill_tokens)
        loss = F.cross_entropy(student_logits, labels)
        T = self.temperature
        distill_loss = F.kl_div(F.log_softmax(distill_logits / T, dim=-1),
                                F.softmax(teacher_logits / T, dim=-1).detach(),
                                reduction="batchmean") * T ** 2
        return loss * (1 - self.alpha) + distill_loss * self.alpha  # <-- CUT


def run():
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
    teacher.eval().requires_grad_(False)
    wrapper = DistillWrapper(teacher, TinyViT())
    opt = torch.optim.Adam([p for p in wrapper.parameters() if p.requires_grad], lr=3e-4)
    img, labels = torch.randn(2, 3, 4, 4), torch.tensor([1, 3])
    loss = wrapper(img, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"wrapper": wrapper, "loss_value": loss.item()}
