"""A Dataset wraps the (trainable) text encoder and returns
`torch.tensor(self.encoder(x))` from `__getitem__` so the default collate
works. The copy has no history, so the encoder that the optimizer holds never
gets a gradient; only the classifier head trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "encoder[0].weight"
EXPECT = "grad_none"


class EncodedDataset(Dataset):
    def __init__(self, encoder, x, y):
        self.encoder, self.x, self.y = encoder, x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        feat = self.encoder(self.x[i])
        return torch.tensor(feat), self.y[i]  # <-- CUT


def run():
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(7, 16), nn.ReLU())
    head = nn.Linear(16, 3)
    opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-3)
    ds = EncodedDataset(encoder, torch.randn(12, 7), torch.randint(0, 3, (12,)))
    feats, y = next(iter(DataLoader(ds, batch_size=12)))
    opt.zero_grad()
    loss = F.cross_entropy(head(feats), y)
    loss.backward()
    opt.step()
    return {"encoder": encoder, "head": head, "loss": loss}
