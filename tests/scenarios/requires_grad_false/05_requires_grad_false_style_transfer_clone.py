"""Neural style transfer: the image to optimize is initialised with
`content.clone()`, which does not require grad, and handed to Adam. The
feature network was not frozen, so backward runs (its weights get gradients)
but generated.grad stays None and the image never changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "generated"
EXPECT = "grad_none"


def gram(f):
    b, c, h, w = f.shape
    f = f.view(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1)])

    def forward(self, x):
        outs = []
        for conv in self.layers:
            x = F.relu(conv(x))
            outs.append(x)
        return outs


def run():
    torch.manual_seed(0)
    net = Features()
    content = torch.rand(1, 3, 16, 16)
    style = torch.rand(1, 3, 16, 16)
    generated = content.clone()  # <-- CUT
    opt = torch.optim.Adam([generated], lr=0.02)
    style_grams = [gram(f) for f in net(style)]
    content_feat = net(content)[-1]
    feats = net(generated)
    loss = F.mse_loss(feats[-1], content_feat) + 1e3 * sum(
        F.mse_loss(gram(f), g) for f, g in zip(feats, style_grams))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"net": net, "generated": generated, "loss": loss}
