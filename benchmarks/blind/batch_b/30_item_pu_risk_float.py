"""Non-negative PU-learning risk for lexicon NER (v-mipeng/LexiconNER#7): the risk
is computed as a Python float via .item() and backward fails with "'float' object
has no attribute 'backward'". The reported fix converts the returned values to
tensors, after which (risk).backward() raises a RuntimeError instead.
"""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class PULoss:
    def __init__(self, prior=0.2, beta=0.0, gamma=1.0):
        self.prior, self.beta, self.gamma = prior, beta, gamma

    def __call__(self, scores, labels):
        pos, unl = labels == 1, labels == 0
        pRisk = torch.sigmoid(-scores[pos]).mean()
        uRisk = torch.sigmoid(scores[unl]).mean()
        nRisk = uRisk - self.prior * torch.sigmoid(scores[pos]).mean()
        if nRisk.item() < -self.beta:
            risk = -self.gamma * nRisk
        else:
            risk = self.prior * pRisk + nRisk
        risk = risk.item()  # <-- CUT
        return torch.tensor(risk), pRisk.item(), nRisk.item()


class FeaturePUModel(nn.Module):
    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.fc = nn.Linear(d, 1)

    def forward(self, tokens):
        return self.fc(torch.tanh(self.embed(tokens))).squeeze(-1)


def train_mini_batch(model, optimizer, loss_fn, batch):
    tokens, labels = batch
    scores = model(tokens).flatten()
    risk, prisk, nrisk = loss_fn(scores, labels.flatten())
    optimizer.zero_grad()
    (risk).backward()
    optimizer.step()
    return risk, prisk, nrisk


def run():
    torch.manual_seed(0)
    model = FeaturePUModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 50, (4, 6))
    labels = (torch.rand(4, 6) < 0.3).long()
    risk, prisk, nrisk = train_mini_batch(model, optimizer, PULoss(), (tokens, labels))
    return {"model": model, "risk": risk}
