"""RL-style fine-tuning of a tiny LM: the user takes the per-step `scores` returned by
`model.generate(..., output_scores=True)` and builds a REINFORCE loss from them. generate() is
decorated with @torch.no_grad(), so the LM gets no gradient; only the value head trains.
"""
import torch
import torch.nn as nn

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.lm_head.weight"
EXPECT = "grad_none"


class TinyLM(nn.Module):
    def __init__(self, vocab=30, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, ids):
        h, _ = self.rnn(self.embed(ids))
        return self.lm_head(h), h

    def _sample_loop(self, ids, max_new_tokens):
        scores = []
        for _ in range(max_new_tokens):
            logits, _ = self.forward(ids)
            step = logits[:, -1].log_softmax(-1)
            nxt = step.argmax(-1, keepdim=True)
            scores.append(step)
            ids = torch.cat([ids, nxt], dim=1)
        return ids, torch.stack(scores, dim=1)

    @torch.no_grad()
    def generate(self, ids, max_new_tokens=4, output_scores=False):
        return self._sample_loop(ids, max_new_tokens)  # <-- CUT


def run():
    torch.manual_seed(0)
    model = TinyLM()
    value_head = nn.Linear(16, 1)
    opt = torch.optim.Adam(list(model.parameters()) + list(value_head.parameters()), lr=1e-4)
    prompt = torch.randint(0, 30, (3, 5))
    seqs, scores = model.generate(prompt, max_new_tokens=4, output_scores=True)
    gen = seqs[:, prompt.size(1):]
    logprobs = scores.gather(-1, gen.unsqueeze(-1)).squeeze(-1).sum(1)
    rewards = (gen == 7).float().sum(1)
    _, h = model(seqs)
    values = value_head(h.detach()[:, -1]).squeeze(1)
    advantage = rewards - values.detach()
    loss = -(advantage * logprobs).mean() + (values - rewards).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "value_head": value_head, "loss": loss}
