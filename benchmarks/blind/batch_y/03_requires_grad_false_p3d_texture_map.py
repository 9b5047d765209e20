"""Texture fitting with a hand-written UV renderer (PyTorch3D TexturesUV style). The texture map is
loaded from an image as a plain tensor and handed to the optimizer, but it was never made to require
grad; the mesh and camera are fixed, so the rendered image has no grad_fn and loss.backward() raises
"element 0 of tensors does not require grad and does not have a grad_fn".
"""
import torch
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TexturesUV:
    def __init__(self, maps, verts_uvs):
        self.maps = maps            # (N, C, H, W)
        self.verts_uvs = verts_uvs  # (V, 2) in [0, 1]

    def sample(self, bary, face_uvs):
        uv = (bary.unsqueeze(-1) * face_uvs).sum(-2)          # (H, W, 2)
        grid = (uv * 2 - 1).unsqueeze(0)
        return F.grid_sample(self.maps, grid, align_corners=False)


class UVRenderer:
    def __init__(self, image_size, faces):
        self.image_size = image_size
        self.faces = faces

    def rasterize(self, verts):
        s = self.image_size
        ys, xs = torch.meshgrid(torch.linspace(0, 1, s), torch.linspace(0, 1, s), indexing="ij")
        v0, v1, v2 = verts[self.faces[0]]
        den = (v1[1] - v2[1]) * (v0[0] - v2[0]) + (v2[0] - v1[0]) * (v0[1] - v2[1])
        w0 = ((v1[1] - v2[1]) * (xs - v2[0]) + (v2[0] - v1[0]) * (ys - v2[1])) / den
        w1 = ((v2[1] - v0[1]) * (xs - v2[0]) + (v0[0] - v2[0]) * (ys - v2[1])) / den
        return torch.stack([w0, w1, 1 - w0 - w1], -1).clamp(0, 1), self.faces[0]

    def __call__(self, verts, textures, light):
        bary, face = self.rasterize(verts)
        texels = textures.sample(bary, textures.verts_uvs[face])
        return texels * light


def run():
    torch.manual_seed(0)
    verts = torch.tensor([[0.05, 0.05, 1.0], [0.95, 0.1, 1.0], [0.4, 0.9, 1.0]])
    faces = torch.tensor([[0, 1, 2]])
    verts_uvs = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.5, 1.0]])
    light = torch.tensor([0.9, 0.85, 0.8]).view(1, 3, 1, 1)
    image_np = torch.rand(16, 16, 3)  # stands in for the PIL image of the initial texture
    init_texture = image_np.permute(2, 0, 1).contiguous()  # <-- CUT
    textures = TexturesUV(maps=init_texture.unsqueeze(0), verts_uvs=verts_uvs)
    renderer = UVRenderer(image_size=12, faces=faces)
    optimizer = torch.optim.Adam([init_texture], lr=0.01)
    target = torch.rand(1, 3, 12, 12)

    images = renderer(verts, textures, light)
    loss = F.mse_loss(images, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"init_texture": init_texture, "images": images, "loss": loss}
