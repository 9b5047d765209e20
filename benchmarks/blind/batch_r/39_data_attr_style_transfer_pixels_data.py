"""Neural style via input optimisation: the generated image is an nn.Parameter inside a
small module whose forward returns `self.pixels.data.clamp(0, 1)` "so the clamp does not
touch the parameter". The loss has no graph back to the pixels and backward raises.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class GeneratedImage(nn.Module):
    def __init__(self, content):
        super().__init__()
        self.pixels = nn.Parameter(content.clone())

    def forward(self):
        return self.pixels.data.clamp(0, 1)  # <-- CUT


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        for p in self.parameters():
            p.requires_grad_(False)  # frozen feature extractor (intended)

    def forward(self, x):
        return F.relu(self.conv(x))


def gram(f):
    b, c, h, w = f.shape
    f = f.view(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


def run():
    torch.manual_seed(0)
    content = torch.rand(1, 3, 8, 8)
    style = torch.rand(1, 3, 8, 8)
    feats = Features()
    img = GeneratedImage(content)
    opt = torch.optim.LBFGS(img.parameters(), max_iter=1)
    with torch.no_grad():
        style_gram = gram(feats(style))
        content_feat = feats(content)

    def closure():
        opt.zero_grad()
        f = feats(img())
        loss = F.mse_loss(gram(f), style_gram) * 1e3 + F.mse_loss(f, content_feat)
        loss.backward()
        return loss

    opt.step(closure)
    return {"img": img}
