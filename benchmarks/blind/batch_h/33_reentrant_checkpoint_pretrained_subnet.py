"""A sub-network that used to be pre-learned is now fine-tuned, and the user checkpoints
it as in the forum thread: checkpoint(self.net, x, y, use_reentrant=True). Its inputs x
and y come from a frozen embedding, so no input requires grad; the reentrant checkpoint
output then carries no graph into self.net, and the subnet's weights get no gradient.
Thread: discuss.pytorch.org/t/checkpoint-for-a-whole-subnet/65295
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.net.mix.weight"
EXPECT = "grad_none"


class PairNet(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mix = nn.Linear(2 * d, d)
        self.ffn = nn.Sequential(nn.ReLU(), nn.Linear(d, d))

    def forward(self, x, y):
        return self.ffn(self.mix(torch.cat([x, y], dim=-1)))


class Matcher(nn.Module):
    def __init__(self, vocab=40, d=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.embed.weight.requires_grad_(False)
        self.net = PairNet(d)
        self.bias_head = nn.Linear(d, 1)
        self.scale = nn.Parameter(torch.tensor(1.0))

    def forward(self, a, b):
        x, y = self.embed(a).mean(1), self.embed(b).mean(1)
        result = checkpoint(self.net, x, y, use_reentrant=True)  # <-- CUT
        return self.scale * result.sum(-1) + self.bias_head(x).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = Matcher()
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    a = torch.randint(0, 40, (4, 5))
    b = torch.randint(0, 40, (4, 5))
    label = torch.tensor([1.0, 0.0, 1.0, 0.0])
    loss = F.binary_cross_entropy_with_logits(model(a, b), label)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
