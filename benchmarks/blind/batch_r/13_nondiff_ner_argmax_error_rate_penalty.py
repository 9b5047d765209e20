"""Joint NER tagger + sentence-level "has entity" head. The tagging term is written as a
token error rate from `logits.argmax(-1)` compared with the gold tags, added to the head's
cross-entropy. The head trains; the tag projection gets no grad at all.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.tag_proj.weight"
EXPECT = "grad_none"


class JointNER(nn.Module):
    def __init__(self, vocab=40, d=10, n_tags=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.gru = nn.GRU(d, d, batch_first=True)
        self.tag_proj = nn.Linear(d, n_tags)
        self.sent_head = nn.Linear(d, 2)

    def forward(self, tokens):
        h, last = self.gru(self.embed(tokens))
        return self.tag_proj(h), self.sent_head(last[-1])


def joint_loss(tag_logits, sent_logits, tags, has_ent, w=0.5):
    pred_tags = tag_logits.argmax(-1)  # <-- CUT
    token_err = (pred_tags != tags).float().mean()
    return F.cross_entropy(sent_logits, has_ent) + w * token_err


def run():
    torch.manual_seed(0)
    model = JointNER()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 40, (4, 7))
    tags = torch.randint(0, 5, (4, 7))
    has_ent = (tags > 0).any(1).long()
    tag_logits, sent_logits = model(tokens)
    loss = joint_loss(tag_logits, sent_logits, tags, has_ent)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
