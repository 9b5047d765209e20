"""Captioning decoder: the CNN image features are computed under no_grad on purpose (frozen
encoder), and the caption word embeddings were moved into the same `with torch.no_grad()`
block when the code was tidied. The LSTM and output layer train; the embedding gets no grad.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.word_embed.weight"
EXPECT = "grad_none"

VOCAB = 25


class ShowTell(nn.Module):
    def __init__(self, d=12):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, d))
        self.word_embed = nn.Embedding(VOCAB, d)
        self.lstm = nn.LSTM(d, d, batch_first=True)
        self.out = nn.Linear(d, VOCAB)

    def forward(self, images, captions):
        with torch.no_grad():
            img = self.cnn(images)
            words = self.word_embed(captions[:, :-1])  # <-- CUT
        seq = torch.cat([img.unsqueeze(1), words], dim=1)
        h, _ = self.lstm(seq)
        return self.out(h)


def run():
    torch.manual_seed(0)
    model = ShowTell()
    opt = torch.optim.Adam([p for n, p in model.named_parameters() if not n.startswith("cnn")], lr=1e-3)
    images = torch.randn(3, 3, 8, 8)
    captions = torch.randint(1, VOCAB, (3, 5))
    logits = model(images, captions)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), captions.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
