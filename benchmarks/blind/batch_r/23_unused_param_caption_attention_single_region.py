"""Attention captioner fed with globally pooled image features (one region). The attention
module short-circuits "when there is only one region, attention is trivial" and returns the
features directly, so the attention layers never enter the graph and keep .grad None.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unused_parameter"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.attn.w_h.weight"
EXPECT = "grad_none"

VOCAB = 20


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w_h = nn.Linear(d, d)
        self.w_f = nn.Linear(d, d)
        self.v = nn.Linear(d, 1)

    def forward(self, feats, h):
        if feats.size(1) == 1:
            return feats.squeeze(1)  # <-- CUT
        e = self.v(torch.tanh(self.w_f(feats) + self.w_h(h).unsqueeze(1))).squeeze(-1)
        return (e.softmax(-1).unsqueeze(-1) * feats).sum(1)


class AttnCaptioner(nn.Module):
    def __init__(self, d=12):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        self.attn = Attention(d)
        self.cell = nn.LSTMCell(2 * d, d)
        self.out = nn.Linear(d, VOCAB)

    def forward(self, feats, captions):
        B, T = captions.shape
        h = c = torch.zeros(B, feats.size(-1))
        logits = []
        for t in range(T - 1):
            ctx = self.attn(feats, h)
            h, c = self.cell(torch.cat([self.embed(captions[:, t]), ctx], -1), (h, c))
            logits.append(self.out(h))
        return torch.stack(logits, 1)


def run():
    torch.manual_seed(0)
    model = AttnCaptioner()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    feats = torch.randn(2, 1, 12)  # global pooled CNN features
    captions = torch.randint(1, VOCAB, (2, 5))
    logits = model(feats, captions)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), captions[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
