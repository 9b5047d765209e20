"""RK-Net keypoint attention: when self.polish is on, the attention map's
border is zeroed with slice assignments (att[:, :, :, 0] = 0, ...). att is the
output of a ReLU, which saved it for backward, so loss.backward() raises; the
suggested fix is `att = att.clone()` first (AggMan96/RK-Net#9).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class USAM(nn.Module):
    def __init__(self, polish=True):
        super().__init__()
        self.kernel = nn.Conv2d(1, 1, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(1)
        self.polish = polish

    def forward(self, x):
        y = x.mean(dim=1, keepdim=True)
        att = F.relu(self.bn(self.kernel(y)))
        if self.polish:
            att[:, :, :, 0] = 0  # <-- CUT
            att[:, :, :, -1] = 0
            att[:, :, 0, :] = 0
            att[:, :, -1, :] = 0
        att = torch.sigmoid(att)
        return x * att + x


class Backbone(nn.Module):
    def __init__(self, n_cls=5):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.usam = USAM()
        self.fc = nn.Linear(8, n_cls)

    def forward(self, x):
        f = self.usam(F.relu(self.conv(x)))
        return self.fc(f.mean(dim=(2, 3)))


def run():
    torch.manual_seed(0)
    model = Backbone().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(4, 3, 12, 12)
    y = torch.randint(0, 5, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
