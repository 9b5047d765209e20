"""Non-autoregressive translation model with a target-length predictor. The predicted
length is cast with .long() so it can size the decoder queries, and the length loss is
an MSE between that integer prediction (as float) and the true length. The token loss
trains encoder and decoder; the length head gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "integer_cast"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.len_head.weight"
EXPECT = "grad_none"


class NATModel(nn.Module):
    def __init__(self, vocab=30, d=16, max_len=12):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.enc = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.len_head = nn.Linear(d, 1)
        self.queries = nn.Embedding(max_len, d)
        self.out = nn.Linear(d, vocab)
        self.max_len = max_len

    def forward(self, src):
        h = self.enc(self.emb(src))
        pooled = h.mean(1)
        pred_len = F.softplus(self.len_head(pooled)).squeeze(-1).long().clamp(1, self.max_len)  # <-- CUT
        q = self.queries.weight[: self.max_len].unsqueeze(0) + pooled.unsqueeze(1)
        return self.out(q), pred_len


def run():
    torch.manual_seed(0)
    model = NATModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    src = torch.randint(0, 30, (4, 9))
    tgt = torch.randint(0, 30, (4, 12))
    tgt_len = torch.tensor([7.0, 9.0, 12.0, 5.0])
    logits, pred_len = model(src)
    tok_loss = F.cross_entropy(logits.reshape(-1, 30), tgt.reshape(-1))
    len_loss = F.mse_loss(pred_len.float(), tgt_len)
    loss = tok_loss + 0.1 * len_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss, "pred_len": pred_len}
