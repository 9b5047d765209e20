"""OwlViT-style class prediction head fine-tuned for detection: the image class
embeddings are normalised in place with /= torch.linalg.norm(...) + 1e-6. The norm has
saved its input for backward, the in-place divide bumps that tensor's version, and
loss.backward() raises. The same /= on the precomputed (no-grad) text queries is fine.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, d_vision=32, d_text=24):
        super().__init__()
        self.dense0 = nn.Linear(d_vision, d_text)
        self.logit_shift = nn.Linear(d_vision, 1)
        self.logit_scale = nn.Linear(d_vision, 1)
        self.elu = nn.ELU()

    def forward(self, image_embeds, query_embeds, query_mask):
        image_class_embeds = self.dense0(image_embeds)
        # Normalize image and text features
        image_class_embeds /= torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6  # <-- CUT
        query_embeds /= torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6
        pred_logits = torch.einsum("...pd,...qd->...pq", image_class_embeds, query_embeds)
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = self.elu(self.logit_scale(image_embeds)) + 1
        pred_logits = (pred_logits + logit_shift) * logit_scale
        return pred_logits.masked_fill(~query_mask[:, None, :], -1e6), image_class_embeds


class TinyVisionTower(nn.Module):
    def __init__(self, d=32, patch=4):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, d, patch, stride=patch)
        self.norm = nn.LayerNorm(d)

    def forward(self, pixel_values):
        return self.norm(self.patch_embed(pixel_values).flatten(2).transpose(1, 2))


def run():
    torch.manual_seed(0)
    vision, head = TinyVisionTower(), OwlViTClassPredictionHead()
    optimizer = torch.optim.AdamW(list(vision.parameters()) + list(head.parameters()), lr=1e-4)
    pixel_values = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        query_embeds = torch.randn(2, 3, 24)   # cached text-tower embeddings
    query_mask = torch.ones(2, 3, dtype=torch.bool)
    targets = torch.zeros(2, 16, 3)
    targets[:, :4, 0] = 1.0
    pred_logits, _ = head(vision(pixel_values), query_embeds, query_mask)
    loss = F.binary_cross_entropy_with_logits(pred_logits, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"vision": vision, "head": head, "loss": loss}
