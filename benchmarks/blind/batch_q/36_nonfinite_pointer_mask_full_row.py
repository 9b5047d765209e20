"""Pointer network with a glimpse over the unvisited nodes (mask filled with -inf)
and a stop head. The decoder runs one step more than there are nodes to score the
stop token, so on that step every entry of the row is -inf: the glimpse softmax
is NaN and the node embeddings get NaN gradients through the glimpse.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "ptr.embed.weight"
EXPECT = "grad_nonfinite"


class Pointer(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.embed = nn.Linear(2, d)
        self.W_ref = nn.Linear(d, d, bias=False)
        self.W_q = nn.Linear(d, d, bias=False)
        self.v = nn.Parameter(torch.randn(d) * 0.1)
        self.cell = nn.GRUCell(d, d)
        self.stop = nn.Linear(d, 1)

    def glimpse(self, ref, h, mask):
        u = (torch.tanh(self.W_ref(ref) + self.W_q(h).unsqueeze(1)) * self.v).sum(-1)
        u = u.masked_fill(mask, float("-inf"))  # <-- CUT
        a = torch.softmax(u, dim=-1)
        return (a.unsqueeze(-1) * ref).sum(1), u

    def forward(self, coords, order):
        B, N, _ = coords.shape
        ref = self.embed(coords)
        h = ref.mean(1)
        mask = torch.zeros(B, N, dtype=torch.bool)
        nll, stop_logits = 0.0, []
        for t in range(N + 1):
            g, u = self.glimpse(ref, h, mask)
            stop_logits.append(self.stop(g).squeeze(-1))
            if t == N:
                break
            idx = order[:, t]
            nll = nll - torch.log_softmax(u, -1).gather(1, idx[:, None]).squeeze(1)
            mask = mask.clone()
            mask[torch.arange(B), idx] = True
            h = self.cell(ref[torch.arange(B), idx], h)
        return nll.mean(), torch.stack(stop_logits, 1)


def run():
    torch.manual_seed(0)
    ptr = Pointer()
    coords = torch.rand(2, 5, 2)
    order = torch.stack([torch.randperm(5) for _ in range(2)])
    nll, stop_logits = ptr(coords, order)
    stop_target = torch.zeros_like(stop_logits)
    stop_target[:, -1] = 1.0
    loss = nll + F.binary_cross_entropy_with_logits(stop_logits, stop_target)
    loss.backward()
    return {"ptr": ptr, "loss": loss}
