"""Tent test-time adaptation setup: the helper first re-enables grads on every
BatchNorm affine parameter and then calls model.requires_grad_(False) to freeze
"the rest". The order is reversed, so nothing requires grad and the entropy
loss's backward() raises."""
import torch
import torch.nn as nn

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        return self.fc(h.mean(dim=(2, 3)))


def configure_model(model):
    model.train()
    params = []
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.requires_grad_(True)
            m.track_running_stats = False
            m.running_mean, m.running_var = None, None
            params += [m.weight, m.bias]
    model.requires_grad_(False)  # <-- CUT
    return params


def run():
    torch.manual_seed(0)
    model = Net()
    params = configure_model(model)
    opt = torch.optim.Adam(params, lr=1e-3)
    x = torch.randn(4, 3, 6, 6)
    logits = model(x)
    ent = -(logits.softmax(1) * logits.log_softmax(1)).sum(1).mean()
    opt.zero_grad()
    ent.backward()
    opt.step()
    return {"model": model, "ent": ent}
