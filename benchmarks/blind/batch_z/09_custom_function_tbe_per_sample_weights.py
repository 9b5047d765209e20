"""torchrec PR#4602 "Fix TritonTBE weighted path grad missing": the weighted
embedding-bag Function uses per_sample_weights in forward, but backward returns None
for them. The table rows are updated by the fused optimizer inside backward (through
`.data`, as TBE does on purpose); the position-weight net that produces the
per-sample weights never receives a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "custom_function"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.pos_weights.weight"
EXPECT = "grad_none"


class WeightedTBEFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weights, indices, offsets, per_sample_weights, lr):
        rows = weights[indices] * per_sample_weights.unsqueeze(-1)
        bags = torch.zeros(offsets.numel(), weights.size(1))
        seg = torch.repeat_interleave(torch.arange(offsets.numel()),
                                      torch.diff(offsets, append=torch.tensor([indices.numel()])))
        bags.index_add_(0, seg, rows)
        ctx.save_for_backward(weights, indices, per_sample_weights, seg)
        ctx.lr = lr
        return bags

    @staticmethod
    def backward(ctx, grad_output):
        weights, indices, per_sample_weights, seg = ctx.saved_tensors
        grad_rows = grad_output[seg] * per_sample_weights.unsqueeze(-1)
        grad_w = torch.zeros_like(weights).index_add_(0, indices, grad_rows)
        return grad_w, None, None, None, None  # <-- CUT


class FusedEmbeddingBag(nn.Module):
    def __init__(self, num_embeddings, dim, lr=0.05):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_embeddings, dim) * 0.1)
        self.lr = lr

    def forward(self, indices, offsets, per_sample_weights):
        return WeightedTBEFunction.apply(self.weight, indices, offsets, per_sample_weights, self.lr)

    def fused_update(self):
        if self.weight.grad is not None:
            self.weight.data.add_(self.weight.grad, alpha=-self.lr)


class SequenceCTR(nn.Module):
    def __init__(self, n_items=40, dim=8, max_len=6):
        super().__init__()
        self.item_bag = FusedEmbeddingBag(n_items, dim)
        self.pos_weights = nn.Embedding(max_len, 1)
        self.dense = nn.Linear(3, dim)
        self.top = nn.Sequential(nn.Linear(2 * dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, dense_x, indices, offsets, positions):
        psw = torch.sigmoid(self.pos_weights(positions)).squeeze(-1)
        pooled = self.item_bag(indices, offsets, psw)
        return self.top(torch.cat([pooled, self.dense(dense_x)], -1)).squeeze(-1)


def run():
    torch.manual_seed(0)
    model = SequenceCTR()
    dense_opt = torch.optim.Adagrad([p for n, p in model.named_parameters() if "item_bag" not in n], lr=0.01)
    indices = torch.tensor([1, 4, 7, 2, 9, 11, 3, 5, 8])
    offsets = torch.tensor([0, 3, 5])
    positions = torch.tensor([0, 1, 2, 0, 1, 0, 1, 2, 3])
    dense_x, clicks = torch.randn(3, 3), torch.tensor([1.0, 0.0, 1.0])
    loss = F.binary_cross_entropy_with_logits(model(dense_x, indices, offsets, positions), clicks)
    dense_opt.zero_grad()
    loss.backward()
    model.item_bag.fused_update()
    dense_opt.step()
    return {"model": model, "loss": loss}
