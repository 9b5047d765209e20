"""DINOv2 depth notebook model (facebookresearch/dinov2#472): the backbone's
feature extractor carries @torch.inference_mode(), so training the depther
raises "Inference tensors cannot be saved for backward". Following the message,
the user clones the features; training runs but backbone.blocks[0].weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.backbone.blocks[0].weight"
EXPECT = "grad_none"


class TinyViT(nn.Module):
    def __init__(self, patch=4, dim=16, depth=2):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))

    @torch.inference_mode()
    def get_intermediate_layers(self, x):
        h = self.patch_embed(x).flatten(2).transpose(1, 2)
        for blk in self.blocks:
            h = h + F.gelu(blk(h))
        return h  # <-- CUT


class DepthEncoderDecoder(nn.Module):
    def __init__(self, backbone, dim=16):
        super().__init__()
        self.backbone = backbone
        self.decode_head = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, 16))

    def forward(self, img):
        feats = self.backbone.get_intermediate_layers(img)
        feats = feats.clone()  # "make a clone to get a normal tensor"
        depth = self.decode_head(feats)                  # (B, N, 16) = 4x4 sub-pixels
        b, n, _ = depth.shape
        side = int(n ** 0.5)
        depth = depth.view(b, side, side, 4, 4).permute(0, 1, 3, 2, 4).reshape(b, 1, side * 4, side * 4)
        return F.relu(depth)


def run():
    torch.manual_seed(0)
    model = DepthEncoderDecoder(TinyViT())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    img = torch.randn(2, 3, 16, 16)
    gt_depth = torch.rand(2, 1, 16, 16) * 10
    pred = model(img)
    loss = F.l1_loss(pred, gt_depth)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
