"""Count regression head whose float output "actually needs to be" a long
(pytorch/pytorch#91431): x = x.clamp(0, max_count) then x = x.long(), and the
loss is computed from x.float(). grad_fn is gone after .long(), so
loss.backward() raises "element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class CountingHead(nn.Module):
    def __init__(self, in_ch=8, max_count=2162):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, 1, 1)
        self.max_count = max_count

    def forward(self, feats):
        x = self.conv(feats).relu().sum(dim=(1, 2, 3)) * 50.0
        x = x.clamp(0, self.max_count)
        x = x.long()  # <-- CUT
        return x


def run():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
    head = CountingHead()
    opt = torch.optim.Adam(list(backbone.parameters()) + list(head.parameters()), lr=1e-4)
    img = torch.randn(4, 3, 16, 16)
    gt_count = torch.tensor([12.0, 40.0, 3.0, 150.0])
    pred_count = head(backbone(img))
    loss = F.mse_loss(pred_count.float(), gt_count)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"backbone": backbone, "head": head, "loss": loss}
