"""Ultra-Fast-Lane-Detection fine-tuning on a small custom set: after loading
the backbone weights from the finetune checkpoint the user adds a loop to
freeze "the model", but it iterates over all parameters of the network
(backbone, aux head and classification head), so loss.backward() raises
(cfzd/Ultra-Fast-Lane-Detection#282).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class parsingNet(nn.Module):
    def __init__(self, griding_num=8, cls_dim=(9, 4)):
        super().__init__()
        self.cls_dim = cls_dim
        self.model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                   nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())
        self.pool = nn.Conv2d(8, 4, 1)
        self.cls = nn.Sequential(nn.Linear(4 * 4 * 4, 32), nn.ReLU(),
                                 nn.Linear(32, (griding_num + 1) * cls_dim[0] * cls_dim[1]))

    def forward(self, x):
        fea = self.pool(self.model(x)).flatten(1)
        return self.cls(fea).view(-1, 9, *self.cls_dim)


def build_from_finetune(net, state_all):
    state_clip = {k: v for k, v in state_all.items() if "model" in k}  # only use backbone parameters
    net.load_state_dict(state_clip, strict=False)
    for param in net.parameters():
        param.requires_grad = False  # <-- CUT
    return net


def run():
    torch.manual_seed(0)
    net = parsingNet()
    pretrained = {k: v.clone() for k, v in parsingNet().state_dict().items()}
    net = build_from_finetune(net, pretrained)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    img = torch.randn(2, 3, 16, 16)
    cls_label = torch.randint(0, 9, (2, 9, 4))
    cls_out = net(img)
    loss = F.cross_entropy(cls_out, cls_label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"net": net, "loss": loss}
