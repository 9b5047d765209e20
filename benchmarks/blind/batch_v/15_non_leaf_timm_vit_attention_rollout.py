"""Grad-weighted attention rollout on a timm-style ViT: the Attention module keeps
`self.attn_map = attn.softmax(-1)` so the user can read `blk.attn.attn_map.grad` after backward
on the class score. attn_map is a non-leaf without retain_grad(), so its .grad stays None.
"""
import torch
import torch.nn as nn

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[1].attn.attn_map"
EXPECT = "grad_none"


class Attention(nn.Module):
    def __init__(self, dim, num_heads=2):
        super().__init__()
        self.num_heads, self.scale = num_heads, (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.attn_map = None

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        self.attn_map = attn.softmax(dim=-1)  # <-- CUT
        x = (self.attn_map @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), Attention(dim)
        self.norm2, self.mlp = nn.LayerNorm(dim), nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self, dim=16, patch=4, n_cls=5):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, 5, dim) * 0.02)
        self.blocks = nn.Sequential(Block(dim), Block(dim))
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, n_cls)

    def forward(self, img):
        x = self.patch_embed(img).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.size(0), -1, -1), x], 1) + self.pos_embed
        x = self.blocks(x)
        return self.head(self.norm(x)[:, 0])


def run():
    torch.manual_seed(0)
    model = TinyViT().eval()
    img = torch.randn(1, 3, 8, 8)
    logits = model(img)
    model.zero_grad()
    logits[0, logits.argmax()].backward()
    return {"model": model, "logits": logits}
