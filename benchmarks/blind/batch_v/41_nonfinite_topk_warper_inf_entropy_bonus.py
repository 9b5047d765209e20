"""Sampling-based RL fine-tuning of a tiny LM with a hand-written loop that reuses a
transformers-style TopKLogitsWarper (filter_value = -inf). An entropy bonus is computed from
the warped scores as sum(p * log p): for filtered tokens 0 * -inf = NaN, and so is the grad.
"""
import torch
import torch.nn as nn

CAUSE = "nonfinite_gradient"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.lm_head.weight"
EXPECT = "grad_nonfinite"


class TopKLogitsWarper:
    def __init__(self, top_k, filter_value=-float("inf")):
        self.top_k, self.filter_value = top_k, filter_value

    def __call__(self, input_ids, scores):
        kth = torch.topk(scores, self.top_k)[0][..., -1, None]
        return scores.masked_fill(scores < kth, self.filter_value)  # <-- CUT


class TinyLM(nn.Module):
    def __init__(self, vocab=20, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, ids):
        return self.lm_head(self.embed(ids).cumsum(1))


def run():
    torch.manual_seed(0)
    model = TinyLM()
    warper = TopKLogitsWarper(top_k=5)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    ids = torch.randint(0, 20, (2, 3))
    logps, entropies = [], []
    for _ in range(3):
        scores = warper(ids, model(ids)[:, -1])
        log_probs = scores.log_softmax(-1)
        probs = log_probs.exp()
        nxt = torch.multinomial(probs.detach(), 1)
        logps.append(log_probs.gather(1, nxt).squeeze(1))
        entropies.append(-(probs * log_probs).sum(-1))
        ids = torch.cat([ids, nxt], 1)
    reward = (ids[:, 3:] == 4).float().sum(1)
    loss = -(reward * torch.stack(logps, 1).sum(1)).mean() - 0.01 * torch.stack(entropies, 1).mean()
    opt.zero_grad()
    loss.backward()
    return {"model": model, "loss": loss}
