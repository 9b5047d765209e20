"""Camera-pose refinement through an nvdiffmodeling-style renderutils op. xfm_points is a custom
autograd.Function (the fused-kernel path) whose backward only returns the gradient for the points and
None for the transform matrix, so the mesh vertices train but the learnable camera translation
cam_t gets no gradient (use_python=True would have worked).
"""
import torch
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "cam_t"
EXPECT = "grad_none"


class _xfm_func(torch.autograd.Function):
    @staticmethod
    def forward(ctx, points, matrix):
        ctx.save_for_backward(points, matrix)
        homo = F.pad(points, (0, 1), value=1.0)
        return torch.matmul(homo, matrix.transpose(1, 2))

    @staticmethod
    def backward(ctx, dout):
        points, matrix = ctx.saved_tensors
        dpoints = torch.matmul(dout, matrix)[..., :3]
        return dpoints, None  # <-- CUT


def xfm_points(points, matrix, use_python=False):
    if use_python:
        return torch.matmul(F.pad(points, (0, 1), value=1.0), matrix.transpose(1, 2))
    return _xfm_func.apply(points, matrix)


def translate(t):
    one, zero = torch.ones(()), torch.zeros(())
    rows = [torch.stack([one, zero, zero, t[0]]), torch.stack([zero, one, zero, t[1]]),
            torch.stack([zero, zero, one, t[2]]), torch.stack([zero, zero, zero, one])]
    return torch.stack(rows)


def perspective(fovy=0.9, aspect=1.0, n=0.1, f=10.0):
    y = 1.0 / torch.tan(torch.tensor(fovy / 2))
    return torch.tensor([[y / aspect, 0, 0, 0], [0, y, 0, 0],
                         [0, 0, -(f + n) / (f - n), -(2 * f * n) / (f - n)], [0, 0, -1, 0]])


def splat(v_clip, size=12, sigma=0.08):
    ndc = v_clip[..., :2] / v_clip[..., 3:4]
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    pix = torch.stack([xs, ys], -1).view(-1, 2)
    d2 = ((pix[None, :, None] - ndc[:, None]) ** 2).sum(-1)
    return torch.exp(-d2 / (2 * sigma ** 2)).sum(-1).view(-1, size, size)


def run():
    torch.manual_seed(0)
    v_pos = (torch.rand(20, 3) - 0.5).requires_grad_(True)
    cam_t = torch.tensor([0.0, 0.0, -2.5], requires_grad=True)
    opt = torch.optim.Adam([{"params": [v_pos], "lr": 1e-3}, {"params": [cam_t], "lr": 1e-2}])
    target = torch.rand(1, 12, 12)
    proj = perspective()
    mtx_in = (proj @ translate(cam_t)).unsqueeze(0)
    v_clip = xfm_points(v_pos[None, ...], mtx_in)
    img = splat(v_clip)
    loss = F.mse_loss(img, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"v_pos": v_pos, "cam_t": cam_t, "mtx_in": mtx_in, "loss": loss}
