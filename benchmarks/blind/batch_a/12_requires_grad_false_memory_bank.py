"""Anomaly-detection memory module (SimonThomine/RememberingNormality#7): the
memory keys and values are created with torch.randn(L, channel).to(device)
instead of nn.Parameter, so they stay at their random init: after backward
the student trains but model.memory.keys.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.memory.keys"
EXPECT = "grad_none"


class MemoryModule(nn.Module):
    def __init__(self, L=10, channel=16, device="cpu"):
        super().__init__()
        self.keys = torch.randn(L, channel).to(device)  # <-- CUT
        self.values = torch.randn(L, channel).to(device)

    def forward(self, q):
        b, c, h, w = q.shape
        qf = q.permute(0, 2, 3, 1).reshape(-1, c)
        attn = torch.softmax(qf @ self.keys.T / c ** 0.5, dim=-1)
        out = attn @ self.values
        return out.view(b, h, w, c).permute(0, 3, 1, 2)


class Student(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU())
        self.memory = MemoryModule(channel=c)
        self.dec = nn.Conv2d(2 * c, c, 1)

    def forward(self, x):
        f = self.enc(x)
        return self.dec(torch.cat([f, self.memory(f)], dim=1))


def run():
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU()).eval()
    model = Student()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        t_feat = teacher(x)
    s_feat = model(x)
    loss = (1 - F.cosine_similarity(s_feat, t_feat, dim=1)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "teacher": teacher, "loss": loss}
