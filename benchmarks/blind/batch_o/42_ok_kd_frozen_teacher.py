"""Control: response-based distillation with a teacher frozen on purpose
(requires_grad_(False), eval(), forward under no_grad) and a teacher copy
filled by load_state_dict. The student's first layer gets a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.features[0].weight"
EXPECT = "grad_ok"



class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(20, width), nn.ReLU(), nn.Dropout(0.0))
        self.classifier = nn.Linear(width, 10)

    def forward(self, x):
        return self.classifier(self.features(x))


def kd_loss(s_logits, t_logits, y, T=4.0, alpha=0.9):
    soft = F.kl_div(F.log_softmax(s_logits / T, 1), F.softmax(t_logits / T, 1),
                    reduction="batchmean") * T * T
    return alpha * soft + (1 - alpha) * F.cross_entropy(s_logits, y)


def run():
    torch.manual_seed(0)
    trained = Net(64)
    teacher = Net(64)
    teacher.load_state_dict(trained.state_dict())
    teacher.eval().requires_grad_(False)
    student = Net(16)
    opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    x, y = torch.randn(16, 20), torch.randint(0, 10, (16,))
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    loss = kd_loss(s_logits, t_logits, y)  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (s_logits.argmax(1) == y).float().mean().item()
    return {"student": student, "teacher": teacher, "loss": loss, "acc": acc}
