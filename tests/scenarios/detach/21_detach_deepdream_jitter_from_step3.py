"""Feature visualization (DeepDream-style): a learnable input image is optimized
for 3 steps to excite one channel. From step index 2 a jitter schedule kicks in,
and the jitter helper rolls x.detach(), so in the last step the loss no longer
reaches the image: after the loop canvas.grad is None.
"""
import torch
import torch.nn as nn

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "canvas"
EXPECT = "grad_none"


def jitter(x, shift):
    return torch.roll(x.detach(), shifts=(shift, shift), dims=(2, 3))  # <-- CUT


def run():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(),
                        nn.Conv2d(6, 6, 3, padding=1))
    net.eval()
    canvas = torch.zeros(1, 3, 12, 12, requires_grad=True)
    opt = torch.optim.Adam([canvas], lr=0.05)
    jitter_start = 2
    losses = []
    for step in range(3):
        opt.zero_grad()
        inp = jitter(canvas, step) if step >= jitter_start else canvas
        act = net(inp)
        loss = -act[:, 3].mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"net": net, "canvas": canvas, "opt": opt, "losses": losses}
