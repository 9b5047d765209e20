"""Control. Vision-language fine-tuning with freeze_vision_tower=True,
tune_img_projector=False, freeze_llm=False and gradient checkpointing on every
block. The frozen tower's checkpoint prints "None of the inputs have
requires_grad=True", which worried the user; the LLM layers still train.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.llm.layers[0].fc1.weight"
EXPECT = "grad_ok"


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class Tower(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.layers = nn.ModuleList([Block(d) for _ in range(n)])
        self.gradient_checkpointing = False

    def forward(self, x):
        for layer in self.layers:
            x = checkpoint(layer, x, use_reentrant=True) if self.gradient_checkpointing else layer(x)
        return x


class VisionLanguageModel(nn.Module):
    def __init__(self, vocab=40, d_vis=12, d=16):
        super().__init__()
        self.patch = nn.Linear(48, d_vis)
        self.vision_tower = Tower(d_vis, 2)
        self.projector = nn.Linear(d_vis, d)
        self.embed_tokens = nn.Embedding(vocab, d)
        self.llm = Tower(d, 2)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, pixel_patches, input_ids):
        vis = self.projector(self.vision_tower(self.patch(pixel_patches)))
        h = torch.cat([vis, self.embed_tokens(input_ids)], dim=1)
        return self.lm_head(self.llm(h))[:, vis.shape[1]:]


def configure(model, args):
    model.patch.requires_grad_(not args["freeze_vision_tower"])
    model.vision_tower.requires_grad_(not args["freeze_vision_tower"])
    model.projector.requires_grad_(args["tune_img_projector"])
    model.llm.requires_grad_(not args["freeze_llm"])
    model.vision_tower.gradient_checkpointing = args["gradient_checkpointing"]
    model.llm.gradient_checkpointing = args["gradient_checkpointing"]


def run():
    torch.manual_seed(0)
    args = {"freeze_vision_tower": True, "tune_img_projector": False, "freeze_llm": False,
            "gradient_checkpointing": True}
    model = VisionLanguageModel()
    configure(model, args)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    pixel_patches = torch.randn(2, 4, 48)
    input_ids = torch.randint(0, 40, (2, 6))
    labels = torch.randint(0, 40, (2, 6))
    logits = model(pixel_patches, input_ids)   # emits the checkpoint UserWarning
    loss = F.cross_entropy(logits.reshape(-1, 40), labels.reshape(-1))  # <-- CUT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
