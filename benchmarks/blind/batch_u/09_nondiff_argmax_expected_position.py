"""pytorch/pytorch#37680 ("we should not mark non-floating point Tensors as requiring
gradients"): a keypoint head predicts the peak location as heatmap.argmax(), converts
it to coordinates and regresses them against the target. argmax output no longer
requires grad, so the whole loss is constant and loss.backward() raises "element 0 of
tensors does not require grad and does not have a grad_fn"."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class KeypointHead(nn.Module):
    def __init__(self, c=8, k=2):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.heat = nn.Conv2d(c, k, 1)

    def forward(self, x):
        return self.heat(torch.relu(self.stem(x)))


def peak_coords(heatmap):
    b, k, h, w = heatmap.shape
    flat_idx = heatmap.flatten(2).argmax(-1)  # <-- CUT
    ys = (flat_idx // w).float() / (h - 1)
    xs = (flat_idx % w).float() / (w - 1)
    return torch.stack([xs, ys], -1) + 2  # shift to the dataset's [2, 3] box frame


def run():
    torch.manual_seed(0)
    model = KeypointHead()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img = torch.randn(2, 3, 12, 12)
    target = torch.rand(2, 2, 2) + 2
    coords = peak_coords(model(img))
    loss = F.smooth_l1_loss(coords, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
