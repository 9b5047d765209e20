"""Pose refinement through an instant-NGP-style hash-grid encoder. The encoder
is a custom autograd.Function whose backward returns the input gradient only
when calc_grad_inputs is set; the model builds it with the default False, so
backward runs (the grid embeddings train) but the camera-pose correction gets
no gradient (ashawkey/torch-ngp#171; adapted).
"""
import torch
import torch.nn as nn

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "pose_refine.delta"
EXPECT = "grad_none"


class _grid_encode(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, embeddings, resolution, calc_grad_inputs=False):
        pos = inputs.clamp(0, 1) * (resolution - 1)
        idx = pos.floor().long().clamp(max=resolution - 2)
        w = pos - idx.float()
        feats = embeddings[idx[:, 0]] * (1 - w[:, :1]) + embeddings[idx[:, 0] + 1] * w[:, :1]
        ctx.save_for_backward(inputs, embeddings, idx, w)
        ctx.calc_grad_inputs = calc_grad_inputs
        ctx.resolution = resolution
        return feats

    @staticmethod
    def backward(ctx, grad):
        inputs, embeddings, idx, w = ctx.saved_tensors
        grad_embeddings = torch.zeros_like(embeddings)
        grad_embeddings.index_add_(0, idx[:, 0], grad * (1 - w[:, :1]))
        grad_embeddings.index_add_(0, idx[:, 0] + 1, grad * w[:, :1])
        grad_inputs = None
        if ctx.calc_grad_inputs:
            diff = embeddings[idx[:, 0] + 1] - embeddings[idx[:, 0]]
            grad_inputs = torch.zeros_like(inputs)
            grad_inputs[:, 0] = (grad * diff).sum(-1) * (ctx.resolution - 1)
        return grad_inputs, grad_embeddings, None, None  # <-- CUT


class GridEncoder(nn.Module):
    def __init__(self, resolution=16, dim=4):
        super().__init__()
        self.resolution = resolution
        self.embeddings = nn.Parameter(torch.randn(resolution, dim) * 0.1)

    def forward(self, inputs):
        return _grid_encode.apply(inputs, self.embeddings, self.resolution)


class PoseRefine(nn.Module):
    def __init__(self):
        super().__init__()
        self.delta = nn.Parameter(torch.zeros(3))

    def forward(self, pts):
        return pts + self.delta


def run():
    torch.manual_seed(0)
    encoder = GridEncoder()
    sigma_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    pose_refine = PoseRefine()
    optimizer = torch.optim.Adam([{"params": encoder.parameters(), "lr": 1e-2},
                                  {"params": sigma_net.parameters()},
                                  {"params": pose_refine.parameters(), "lr": 1e-3}], lr=1e-3)
    pts = torch.rand(32, 3) * 0.8 + 0.1
    gt_sigma = torch.rand(32, 1)
    x = pose_refine(pts)
    sigma = sigma_net(encoder(x))
    loss = ((sigma - gt_sigma) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"pose_refine": pose_refine, "encoder": encoder, "loss": loss}
