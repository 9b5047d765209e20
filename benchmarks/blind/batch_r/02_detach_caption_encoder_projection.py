"""Image captioning: the CNN backbone is frozen on purpose (requires_grad False), and the
user also detaches the projected image features "to be safe". That detach sits after the
trainable projection layer, so encoder.proj never learns; the decoder still trains.
Thread: no SO/SE thread located; reconstructed from a common pattern.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "detach"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder.proj.weight"
EXPECT = "grad_none"


class Encoder(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        for p in self.backbone.parameters():
            p.requires_grad = False  # frozen pretrained CNN (intended)
        self.proj = nn.Linear(8, d)

    def forward(self, images):
        f = self.backbone(images).flatten(1)
        f = self.proj(f)
        return f.detach()  # <-- CUT


class Decoder(nn.Module):
    def __init__(self, vocab=30, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, d, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, feats, captions):
        x = torch.cat([feats.unsqueeze(1), self.embed(captions[:, :-1])], dim=1)
        h, _ = self.lstm(x)
        return self.out(h)


class Captioner(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()

    def forward(self, images, captions):
        return self.decoder(self.encoder(images), captions)


def run():
    torch.manual_seed(0)
    model = Captioner()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-3)
    images = torch.randn(2, 3, 8, 8)
    captions = torch.randint(1, 30, (2, 6))
    logits = model(images, captions)
    loss = F.cross_entropy(logits.reshape(-1, 30), captions.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
