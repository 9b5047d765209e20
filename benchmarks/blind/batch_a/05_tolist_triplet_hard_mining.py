"""Keyword-spotting triplet loss with hard-negative mining done in Python: the
pairwise distances are pulled out with .tolist(), the hardest triplets picked in
a loop, and the losses rebuilt with torch.tensor(). backward() then complains
(roman-vygon/triplet_loss_kws#6; the suggested fix sets requires_grad=True).
"""
import torch
import torch.nn as nn

CAUSE = "tolist_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class Encoder(nn.Module):
    def __init__(self, n_mels=20, emb=16):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(n_mels, 32, 3, padding=1), nn.ReLU(),
                                  nn.Conv1d(32, emb, 3, padding=1))

    def forward(self, x):
        return nn.functional.normalize(self.conv(x).mean(-1), dim=-1)


class TripletLoss(nn.Module):
    def __init__(self, margin=0.5):
        super().__init__()
        self.margin = margin

    def forward(self, emb, labels):
        dist = torch.cdist(emb, emb)
        d = dist.tolist()  # <-- CUT
        lab = labels.tolist()
        losses = []
        for a in range(len(lab)):
            pos = [d[a][j] for j in range(len(lab)) if lab[j] == lab[a] and j != a]
            neg = [d[a][j] for j in range(len(lab)) if lab[j] != lab[a]]
            if pos and neg:
                losses.append(max(max(pos) - min(neg) + self.margin, 0.0))
        losses = torch.tensor(losses)
        return losses.mean()


def run():
    torch.manual_seed(0)
    model = Encoder()
    criterion = TripletLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(8, 20, 12)
    labels = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    optimizer.zero_grad()
    loss = criterion(model(x), labels)
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
