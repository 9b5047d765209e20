"""After huggingface/finetrainers#405 ("why the get_gradient_norm return none?"): with a
DeepSpeed-style engine, `accelerator.backward(loss)` runs backward *and* the engine step, which
clears the gradients (set to None) before the training loop measures them. The gradient norm
before and after clipping is computed from None grads: transformer.proj_in.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "set_to_none_timing"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "transformer.proj_in.weight"
EXPECT = "grad_none"


class EngineWrapper:
    """Stand-in for the DeepSpeed engine wrapper used by the accelerator."""

    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def backward(self, loss):
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()  # <-- CUT


class Accelerator:
    def __init__(self, engine):
        self.engine = engine
        self.sync_gradients = True

    def backward(self, loss):
        self.engine.backward(loss)

    def clip_grad_norm_(self, parameters, max_norm):
        params = [p for p in parameters if p.grad is not None]
        if params:
            torch.nn.utils.clip_grad_norm_(params, max_norm)


def get_gradient_norm(parameters):
    norm = 0
    for param in parameters:
        if param.grad is None:
            continue
        local_norm = param.grad.detach().data.norm(2)
        norm += local_norm.item() ** 2
    return norm ** 0.5


class TinyVideoTransformer(nn.Module):
    def __init__(self, c=4, d=16):
        super().__init__()
        self.proj_in = nn.Linear(c, d)
        self.block = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.proj_out = nn.Linear(d, c)

    def forward(self, latents, t):
        h = self.proj_in(latents) + t[:, None, None]
        return self.proj_out(self.block(h))


def run():
    torch.manual_seed(0)
    transformer = TinyVideoTransformer()
    optimizer = torch.optim.AdamW(transformer.parameters(), lr=1e-4)
    accelerator = Accelerator(EngineWrapper(transformer, optimizer))
    latents = torch.randn(2, 6, 4)
    noise = torch.randn_like(latents)
    t = torch.rand(2)
    noisy = (1 - t[:, None, None]) * latents + t[:, None, None] * noise
    loss = F.mse_loss(transformer(noisy, t), noise - latents)
    accelerator.backward(loss)
    if accelerator.sync_gradients:
        gradient_norm_before_clip = get_gradient_norm(transformer.parameters())
        accelerator.clip_grad_norm_(transformer.parameters(), 1.0)
        gradient_norm_after_clip = get_gradient_norm(transformer.parameters())
    return {"transformer": transformer, "loss": loss,
            "gradient_norm_before_clip": gradient_norm_before_clip,
            "gradient_norm_after_clip": gradient_norm_after_clip}
