"""Single-process rehearsal of DDP's fp16 gradient compression: the user registers a hook on the
encoder output that round-trips the gradient through float16, like the fp16_compress_hook. The loss
is divided by world_size * accumulation * tokens, so the gradients are ~1e-10 and underflow to 0 in
float16. The head (after the hook) trains; the encoder's gradient is all zeros.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_zero"

CFG = {"world_size": 8, "accum_steps": 16, "tokens_per_batch": 4096}


def fp16_compress(grad):
    return grad.to(torch.float16).to(grad.dtype)  # <-- CUT


class Tagger(nn.Module):
    def __init__(self, d_in=12, d=32, n_tags=5):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(d_in, d), nn.Tanh())
        self.head = nn.Linear(d, n_tags)
        self.compress = True

    def forward(self, x):
        h = self.encoder(x)
        if self.compress and h.requires_grad:
            h.register_hook(fp16_compress)
        return self.head(h)


def run():
    torch.manual_seed(0)
    model = Tagger()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(64, 12), torch.randint(0, 5, (64,))
    scale = CFG["world_size"] * CFG["accum_steps"] * CFG["tokens_per_batch"]
    loss = F.cross_entropy(model(x), y, reduction="sum") / 64 / scale / 1000.0
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
