"""pytorch/pytorch#6884 ("Handle requires_grad not explicitly set for checkpoint inputs"):
a memory-saving encoder wraps its first block in checkpoint(..., use_reentrant=True);
the block's only input is the data batch, which does not require grad, so the
checkpointed output does not require grad and block 0 is silently cut off:
model.blocks[0].weight.grad is None while the later blocks train."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].weight"
EXPECT = "grad_none"


class CheckpointedEncoder(nn.Module):
    def __init__(self, d=12, depth=3, ckpt_first=True):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(d, d) for _ in range(depth))
        self.ckpt_first = ckpt_first

    def forward(self, x):
        for i, blk in enumerate(self.blocks):
            if i == 0 and self.ckpt_first:
                x = checkpoint(lambda t: torch.relu(blk(t)), x, use_reentrant=True)  # <-- CUT
            else:
                x = torch.relu(blk(x))
        return x


def run():
    torch.manual_seed(0)
    model = CheckpointedEncoder()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(4, 12)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
