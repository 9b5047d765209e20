"""CLIP-style prompt tuning (the "Inference tensors cannot be saved for backward ... make a
clone" message reworded in pytorch/pytorch#161164): encode_prompts() is decorated with
@torch.inference_mode() because the text encoder is frozen, but it also consumes the
learnable context vectors. The first run raised the inference-tensor error at the
logits matmul, so the author added .clone(); now model.ctx.grad is None."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.ctx"
EXPECT = "grad_none"


class PromptLearner(nn.Module):
    def __init__(self, n_cls=4, n_ctx=3, d=16):
        super().__init__()
        self.ctx = nn.Parameter(torch.randn(n_ctx, d) * 0.02)
        self.register_buffer("cls_tokens", torch.randn(n_cls, d))
        self.text_encoder = nn.Linear(d, d)
        self.image_proj = nn.Linear(20, d)
        self.text_encoder.requires_grad_(False)

    @torch.inference_mode()
    def encode_prompts(self):
        prompts = self.cls_tokens + self.ctx.mean(0, keepdim=True)
        return F.normalize(self.text_encoder(prompts), dim=-1)  # <-- CUT

    def forward(self, images):
        text = self.encode_prompts().clone()
        img = F.normalize(self.image_proj(images), dim=-1)
        return 20.0 * img @ text.t()


def run():
    torch.manual_seed(0)
    model = PromptLearner()
    opt = torch.optim.SGD([model.ctx, *model.image_proj.parameters()], lr=2e-3)
    images, labels = torch.randn(6, 20), torch.randint(0, 4, (6,))
    loss = F.cross_entropy(model(images), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
