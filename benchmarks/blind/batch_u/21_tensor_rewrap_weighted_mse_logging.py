"""pytorch/pytorch#59800 (weighted MSE over undamaged/damaged pixels, then "To copy
construct from a tensor ... torch.tensor(value)" and a flat loss curve): the custom
loss passes its two terms through a `to_float_tensor` helper that calls
torch.tensor(value, dtype=torch.float) so the logger accepts them, and the trainer
backpropagates the re-wrapped sum: the segmentation net gets no gradient."""
import torch
import torch.nn as nn

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "net.conv.weight"
EXPECT = "grad_none"


class DamageNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)
        self.bias_gain = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return torch.sigmoid(self.conv(x))


def to_float_tensor(value):
    return torch.tensor(value, dtype=torch.float)  # <-- CUT


def weighted_mse(y, pred, x, mask, weight=10):
    x = torch.reshape(x[:, 0, :, :], (-1, 1, 8, 8))
    mask = torch.reshape(mask, (-1, 1, 8, 8))
    num_und_pix = torch.sum(x != 0)
    num_dam_pix = torch.sum(mask == 1).clamp(min=1)
    out_und = (((y - pred) ** 2) * x).sum() / num_und_pix
    out_dam = (((y - pred) ** 2) * mask).sum() / num_dam_pix * weight
    return to_float_tensor(out_und), to_float_tensor(out_dam)


def run():
    torch.manual_seed(0)
    net = DamageNet()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    img = torch.rand(2, 3, 8, 8)
    y = (torch.rand(2, 1, 8, 8) > 0.5).float()
    mask = (torch.rand(2, 8, 8) > 0.7).float()
    pred = net(img)
    und, dam = weighted_mse(y, pred, img, mask)
    loss = (und + dam) * net.bias_gain
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "loss": loss}
