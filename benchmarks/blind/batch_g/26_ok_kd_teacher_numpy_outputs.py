"""Control. Knowledge distillation where the teacher (in eval mode) is run once
per epoch and its logits are stored as numpy arrays, then converted back with
torch.from_numpy inside the student loop. The user feared the teacher would be
updated; it is not, and the student receives a normal gradient from the KD loss.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "student.fc.weight"
EXPECT = "grad_ok"


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3, padding=1)
        self.fc = nn.Linear(width, 10)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(F.relu(self.conv(x)), 1).flatten(1))


def fetch_teacher_outputs(teacher, dataloader):
    teacher.eval()
    outputs = []
    for data_batch, _ in dataloader:
        output_teacher_batch = teacher(data_batch).data.cpu().numpy()
        outputs.append(output_teacher_batch)
    return outputs


def loss_fn_kd(outputs, labels, teacher_outputs, params):
    alpha, T = params["alpha"], params["temperature"]
    kd = nn.KLDivLoss(reduction="batchmean")(F.log_softmax(outputs / T, dim=1), F.softmax(teacher_outputs / T, dim=1))
    return kd * (alpha * T * T) + F.cross_entropy(outputs, labels) * (1.0 - alpha)


def train_kd(student, teacher_outputs, optimizer, dataloader, params):
    student.train()
    for i, (train_batch, labels_batch) in enumerate(dataloader):
        output_batch = student(train_batch)
        output_teacher_batch = torch.from_numpy(teacher_outputs[i])
        loss = loss_fn_kd(output_batch, labels_batch, output_teacher_batch, params)  # <-- CUT
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss


def run():
    torch.manual_seed(0)
    teacher, student = Net(16), Net(4)
    optimizer = torch.optim.SGD(student.parameters(), lr=0.01, momentum=0.9)
    dataloader = [(torch.randn(4, 3, 8, 8), torch.tensor([1, 2, 3, 4]))]
    params = {"alpha": 0.9, "temperature": 4.0}
    teacher_outputs = fetch_teacher_outputs(teacher, dataloader)
    assert isinstance(teacher_outputs[0], np.ndarray)
    loss = train_kd(student, teacher_outputs, optimizer, dataloader, params)
    return {"student": student, "teacher": teacher, "loss": loss}
