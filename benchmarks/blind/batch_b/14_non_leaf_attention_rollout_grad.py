"""Gradient-weighted attention rollout for a ViT (the pytorch/pytorch#3890
pattern: "I am attempting to save the gradient of a non-leaf node"): each block
stores self.attn_map = softmax(...) and the explainer reads
blocks[-1].attn_map.grad after backward(). It is a non-leaf without retain_grad: None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[-1].attn_map"
EXPECT = "grad_none"


class Block(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.attn_map = None

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)  # <-- CUT
        self.attn_map = attn
        return x + self.proj(attn @ v)


class ViT(nn.Module):
    def __init__(self, d=16, depth=2, n_cls=4):
        super().__init__()
        self.patch = nn.Linear(12, d)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d))
        self.blocks = nn.ModuleList(Block(d) for _ in range(depth))
        self.head = nn.Linear(d, n_cls)

    def forward(self, patches):
        x = torch.cat([self.cls_token.expand(patches.shape[0], -1, -1), self.patch(patches)], dim=1)
        for blk in self.blocks:
            x = blk(x)
        return self.head(x[:, 0])


def explain(model, patches, target):
    logits = model(patches)
    model.zero_grad()
    logits[:, target].sum().backward()
    cams = []
    for blk in model.blocks:
        grad = blk.attn_map.grad
        cam = blk.attn_map if grad is None else (grad * blk.attn_map).clamp(min=0)
        cams.append(cam.mean(0))
    return cams


def run():
    torch.manual_seed(0)
    model = ViT()
    patches = torch.randn(1, 9, 12)
    cams = explain(model, patches, target=2)
    return {"model": model, "cams": cams}
