"""Follows pytorch/pytorch#41490 (custom Function backward returning None now leaves the
input's .grad None instead of zeros): a fused "scale and mask" autograd.Function for
attention logits returns None for its scale input, written when the scale was a constant.
The scale is now a learnable Parameter, and model.attn.log_scale.grad stays None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.attn.log_scale"
EXPECT = "grad_none"


class FusedScaleMask(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores, scale, mask):
        ctx.save_for_backward(scale, mask)
        return scores.mul(scale).masked_fill(mask, -1e4)

    @staticmethod
    def backward(ctx, grad_out):
        scale, mask = ctx.saved_tensors
        grad_scores = grad_out.mul(scale).masked_fill(mask, 0.0)
        return grad_scores, None, None  # <-- CUT


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.log_scale = nn.Parameter(torch.tensor(-0.5 * torch.log(torch.tensor(float(d)))))

    def forward(self, x, pad_mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2)
        mask = pad_mask[:, None, :].expand_as(scores)
        scores = FusedScaleMask.apply(scores, self.log_scale.exp(), mask)
        return self.out(torch.softmax(scores, dim=-1) @ v)


class Classifier(nn.Module):
    def __init__(self, vocab=40, d=16, n_cls=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.attn = Attention(d)
        self.head = nn.Linear(d, n_cls)

    def forward(self, tokens, pad_mask):
        h = self.embed(tokens)
        h = h + self.attn(h, pad_mask)
        keep = (~pad_mask).float().unsqueeze(-1)
        return self.head((h * keep).sum(1) / keep.sum(1))


def run():
    torch.manual_seed(0)
    model = Classifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.randint(1, 40, (4, 6))
    pad_mask = torch.zeros(4, 6, dtype=torch.bool)
    pad_mask[0, 4:] = True
    pad_mask[2, 5:] = True
    y = torch.tensor([0, 2, 1, 0])
    loss = F.cross_entropy(model(tokens, pad_mask), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
