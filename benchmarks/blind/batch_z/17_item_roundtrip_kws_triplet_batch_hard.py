"""roman-vygon/triplet_loss_kws#6 "Torch autograd expects Variable with requires_grad
set to True": the keyword-spotting triplet loss mines hard pairs in a Python loop on
`.item()` distances and rebuilds the losses with torch.tensor. The workaround given in
the thread (`mean_losses.requires_grad = True`) silences the error, so training runs,
but the encoder's weights never get a gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder.conv.weight"
EXPECT = "grad_none"


class KWSEncoder(nn.Module):
    def __init__(self, n_mfcc=10, emb=8):
        super().__init__()
        self.conv = nn.Conv1d(n_mfcc, 16, 3, padding=1)
        self.fc = nn.Linear(16, emb)

    def forward(self, mfcc):
        h = F.relu(self.conv(mfcc)).mean(-1)
        return F.normalize(self.fc(h), dim=-1)


class TripletLoss(nn.Module):
    def __init__(self, margin=0.5):
        super().__init__()
        self.margin = margin

    def forward(self, embeddings, labels):
        dist = torch.cdist(embeddings, embeddings)
        losses = []
        for i in range(len(labels)):
            hardest_pos, hardest_neg = 0.0, 1e9
            for j in range(len(labels)):
                d = dist[i, j].item()  # <-- CUT
                if labels[j] == labels[i] and j != i:
                    hardest_pos = max(hardest_pos, d)
                elif labels[j] != labels[i]:
                    hardest_neg = min(hardest_neg, d)
            losses.append(max(hardest_pos - hardest_neg + self.margin, 0.0))
        mean_losses = torch.tensor(losses).mean()
        mean_losses.requires_grad = True
        return mean_losses


def run():
    torch.manual_seed(0)
    encoder = KWSEncoder()
    criterion = TripletLoss()
    opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
    mfcc = torch.randn(6, 10, 20)
    labels = torch.tensor([0, 0, 1, 1, 2, 2])
    loss = criterion(encoder(mfcc), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"encoder": encoder, "loss": loss}
