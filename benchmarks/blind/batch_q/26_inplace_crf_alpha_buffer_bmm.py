"""Linear-chain CRF forward algorithm in probability space with per-step
rescaling. The forward variables live in one preallocated `alpha` buffer that is
filled slice by slice; each step's bmm saved a view of the previous slice, and
the next slice write bumps the buffer's version, so backward raises "modified
by an inplace operation".
"""
import torch
import torch.nn as nn

CAUSE = "inplace_saved_tensor"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class ScaledCRF(nn.Module):
    def __init__(self, n_tags=4):
        super().__init__()
        self.transitions = nn.Parameter(0.1 * torch.randn(n_tags, n_tags))

    def log_partition(self, emissions):
        B, T, K = emissions.shape
        trans = self.transitions.exp().unsqueeze(0).expand(B, K, K)
        pot = emissions.exp()
        alpha = torch.zeros(B, T, K)
        log_z = torch.zeros(B)
        alpha[:, 0] = pot[:, 0] / pot[:, 0].sum(-1, keepdim=True)
        log_z = log_z + pot[:, 0].sum(-1).log()
        for t in range(1, T):
            a = torch.bmm(alpha[:, t - 1].unsqueeze(1), trans).squeeze(1) * pot[:, t]
            s = a.sum(-1, keepdim=True)
            alpha[:, t] = a / s  # <-- CUT
            log_z = log_z + s.squeeze(-1).log()
        return log_z

    def gold_score(self, emissions, tags):
        s = emissions.gather(2, tags.unsqueeze(-1)).squeeze(-1).sum(1)
        return s + self.transitions[tags[:, :-1], tags[:, 1:]].sum(1)


class Tagger(nn.Module):
    def __init__(self, vocab=30, d=12, n_tags=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.conv = nn.Conv1d(d, d, 3, padding=1)
        self.proj = nn.Linear(d, n_tags)
        self.crf = ScaledCRF(n_tags)

    def nll(self, tokens, tags):
        h = torch.relu(self.conv(self.emb(tokens).transpose(1, 2))).transpose(1, 2)
        em = self.proj(h)
        return (self.crf.log_partition(em) - self.crf.gold_score(em, tags)).mean()


def run():
    torch.manual_seed(0)
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, tags = torch.randint(0, 30, (2, 6)), torch.randint(0, 4, (2, 6))
    loss = model.nll(tokens, tags)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
