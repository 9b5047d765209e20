"""StyleGAN latent optimisation with a CLIP loss plus an ArcFace identity loss
(pytorch/pytorch#52879: the identity loss alone "does not decrease"). The
synthesized image goes through a numpy face-alignment crop before ArcFace, so the
identity term never reaches the latent: with ident_loss alone latent.grad is None.
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "numpy_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "latent"
EXPECT = "grad_none"


def align_face(img_tensor, box=(2, 2, 14, 14)):
    img = img_tensor.detach().cpu().numpy()  # <-- CUT
    x0, y0, x1, y1 = box
    crop = img[:, :, y0:y1, x0:x1]
    crop = (crop - crop.mean()) / (crop.std() + 1e-6)
    return torch.from_numpy(np.ascontiguousarray(crop, dtype=np.float32))


def run():
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(8, 3 * 16 * 16), nn.Tanh())
    arcface = nn.Sequential(nn.Flatten(), nn.Linear(3 * 12 * 12, 512))
    for p in list(generator.parameters()) + list(arcface.parameters()):
        p.requires_grad_(False)
    arcface[1].weight.requires_grad_(True)  # left trainable by the ArcFace wrapper
    latent = torch.randn(1, 8, requires_grad=True)
    optimizer = torch.optim.Adam([latent], lr=0.05)
    source_face = torch.rand(1, 3, 16, 16) * 2 - 1
    embeds_s = arcface(align_face(source_face)).detach()
    img = generator(latent).view(1, 3, 16, 16)
    embeds = arcface(align_face(img))
    ident_loss = sum(((embeds_s - embeds) ** 2).reshape(512))
    loss = ident_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"latent": latent, "arcface": arcface, "loss": loss}
