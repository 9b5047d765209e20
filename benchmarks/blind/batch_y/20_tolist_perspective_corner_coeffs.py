"""Learned perspective augmentation on top of torchvision's F.perspective. The corner offsets are an
nn.Parameter, but perspective() takes startpoints/endpoints as Python lists, so the perturbed corners
go through .tolist(); the homography coefficients are then solved from plain numbers. The classifier
trains; aug.corner_offsets.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "aug.corner_offsets"
EXPECT = "grad_none"


def _get_perspective_coeffs(startpoints, endpoints):
    a_matrix = torch.zeros(2 * len(startpoints), 8, dtype=torch.float)
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a_matrix[2 * i, :] = torch.tensor([p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]])
        a_matrix[2 * i + 1, :] = torch.tensor([0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]])
    b_matrix = torch.tensor(startpoints, dtype=torch.float).view(8)
    res = torch.linalg.lstsq(a_matrix, b_matrix, driver="gels").solution
    return res.tolist()


def _perspective_grid(coeffs, ow, oh):
    theta1 = torch.tensor([[[coeffs[0], coeffs[1], coeffs[2]], [coeffs[3], coeffs[4], coeffs[5]]]])
    theta2 = torch.tensor([[[coeffs[6], coeffs[7], 1.0], [coeffs[6], coeffs[7], 1.0]]])
    d = 0.5
    base_grid = torch.empty(1, oh, ow, 3)
    base_grid[..., 0].copy_(torch.linspace(d, ow * 1.0 + d - 1.0, steps=ow))
    base_grid[..., 1].copy_(torch.linspace(d, oh * 1.0 + d - 1.0, steps=oh).unsqueeze_(-1))
    base_grid[..., 2].fill_(1)
    rescaled_theta1 = theta1.transpose(1, 2) / torch.tensor([0.5 * ow, 0.5 * oh])
    g1 = base_grid.view(1, oh * ow, 3).bmm(rescaled_theta1)
    g2 = base_grid.view(1, oh * ow, 3).bmm(theta2.transpose(1, 2))
    return (g1 / g2 - 1.0).view(1, oh, ow, 2)


def perspective(img, startpoints, endpoints):
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    n, c, h, w = img.shape
    grid = _perspective_grid(coeffs, ow=w, oh=h).expand(n, -1, -1, -1)
    return F.grid_sample(img, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


class LearnedPerspective(nn.Module):
    def __init__(self, size=16):
        super().__init__()
        s = float(size - 1)
        self.register_buffer("corners", torch.tensor([[0.0, 0.0], [s, 0.0], [s, s], [0.0, s]]))
        self.corner_offsets = nn.Parameter(torch.tensor([[1.0, 0.5], [-0.5, 1.0], [-1.0, -0.5], [0.5, -1.0]]))

    def forward(self, img):
        startpoints = self.corners.tolist()
        endpoints = (self.corners + self.corner_offsets).tolist()  # <-- CUT
        return perspective(img, startpoints, endpoints)


def run():
    torch.manual_seed(0)
    aug = LearnedPerspective()
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(8, 4))
    opt = torch.optim.Adam(list(model.parameters()) + list(aug.parameters()), lr=1e-3)
    images = torch.rand(4, 3, 16, 16)
    labels = torch.tensor([0, 1, 2, 3])
    loss = F.cross_entropy(model(aug(images)), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"aug": aug, "model": model, "loss": loss}
