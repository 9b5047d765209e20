"""Feature distillation: intermediate features are captured with a forward hook
that stores output.detach() in a dict, and the student's feature-matching loss
is computed from the stored tensors. The student's backbone gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student[0].weight"
EXPECT = "grad_none"

features = {}


def save_to(name):
    def hook(module, inputs, output):
        features[name] = output.detach()  # <-- CUT
    return hook


def run():
    torch.manual_seed(0)
    features.clear()
    student = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    teacher = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    adapter = nn.Linear(16, 16)
    student[1].register_forward_hook(save_to("student"))
    teacher[1].register_forward_hook(save_to("teacher"))
    x = torch.randn(6, 8)
    with torch.no_grad():
        teacher(x)
    student(x)
    loss = F.mse_loss(adapter(features["student"]), features["teacher"])
    loss.backward()
    return {"student": student, "adapter": adapter, "loss": loss}
