"""Reproduces nayeon7lee/bert-summarization#7: `train_one_batch` calls
`generate_refinement_output`, which runs the refine decoder inside `torch.no_grad()` (it was
written for decoding). The refine loss is added to the draft loss, backward runs, but the
refine decoder never learns: model.refine_decoder.out.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.refine_decoder.out.weight"
EXPECT = "grad_none"


class Decoder(nn.Module):
    def __init__(self, d, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(2 * d, d, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, tgt_in, memory):
        ctx = memory.mean(dim=1, keepdim=True).expand(-1, tgt_in.shape[1], -1)
        h, _ = self.rnn(torch.cat([self.embed(tgt_in), ctx], dim=-1))
        return self.out(h)


class Summarizer(nn.Module):
    def __init__(self, d=16, vocab=30):
        super().__init__()
        self.encoder = nn.Sequential(nn.Embedding(vocab, d), nn.Linear(d, d), nn.Tanh())
        self.draft_decoder = Decoder(d, vocab)
        self.refine_decoder = Decoder(d, vocab)

    def generate_refinement_output(self, draft_logits, memory):
        with torch.no_grad():
            draft_tokens = draft_logits.argmax(-1)
            refine_logits = self.refine_decoder(draft_tokens, memory)  # <-- CUT
        return refine_logits

    def train_one_batch(self, src, tgt_in, tgt_out, optimizer):
        memory = self.encoder(src)
        draft_logits = self.draft_decoder(tgt_in, memory)
        draft_loss = F.cross_entropy(draft_logits.flatten(0, 1), tgt_out.flatten())
        refine_logits = self.generate_refinement_output(draft_logits, memory)
        refine_loss = F.cross_entropy(refine_logits.flatten(0, 1), tgt_out.flatten())
        loss = draft_loss + refine_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss, draft_loss, refine_loss


def run():
    torch.manual_seed(0)
    model = Summarizer()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    src = torch.randint(0, 30, (3, 9))
    tgt = torch.randint(0, 30, (3, 6))
    loss, draft_loss, refine_loss = model.train_one_batch(src, tgt[:, :-1], tgt[:, 1:], optimizer)
    return {"model": model, "loss": loss, "refine_loss": refine_loss}
