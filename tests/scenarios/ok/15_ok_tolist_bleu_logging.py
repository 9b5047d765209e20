"""Control: after the teacher-forced training loss, the greedy predictions are
turned into token lists with .tolist() to compute a BLEU-like overlap score for
logging; the score never reaches the loss, so the model trains normally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "proj.weight"
EXPECT = "grad_ok"


def overlap(pred_ids, ref_ids):
    hits = sum(len(set(p) & set(r)) for p, r in zip(pred_ids, ref_ids))
    return hits / max(1, sum(len(r) for r in ref_ids))


def run():
    torch.manual_seed(0)
    emb, proj = nn.Embedding(15, 8), nn.Linear(8, 15)
    src = torch.randint(0, 15, (3, 6))
    tgt = torch.randint(0, 15, (3, 6))
    logits = proj(torch.tanh(emb(src)))
    loss = F.cross_entropy(logits.reshape(-1, 15), tgt.reshape(-1))  # <-- CUT
    loss.backward()
    score = overlap(logits.argmax(-1).tolist(), tgt.tolist())
    return {"emb": emb, "proj": proj, "loss": loss, "score": score}
