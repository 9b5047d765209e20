"""ConVIRT image-report contrastive pre-training (edreisMD/ConVIRT-pytorch#7):
the text branch's encoder pass and its projection head are wrapped in
`with torch.no_grad():`, so the text projection head, which is meant to train,
never gets a gradient: model.text_proj[0].weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "no_grad_block"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.text_proj[0].weight"
EXPECT = "grad_none"


class ConVIRT(nn.Module):
    def __init__(self, vocab=50, d_txt=32, d_img=32, d_out=16):
        super().__init__()
        self.image_encoder = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2), nn.ReLU(),
                                           nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, d_img))
        self.text_encoder = nn.EmbeddingBag(vocab, d_txt)
        self.img_proj = nn.Sequential(nn.Linear(d_img, d_out), nn.ReLU(), nn.Linear(d_out, d_out))
        self.text_proj = nn.Sequential(nn.Linear(d_txt, d_out), nn.ReLU(), nn.Linear(d_out, d_out))

    def text_embed(self, tokens):
        with torch.no_grad():
            bert_out = self.text_encoder(tokens)
            zt = self.text_proj(bert_out)  # <-- CUT
        return zt

    def forward(self, xis, xls):
        zis = self.img_proj(self.image_encoder(xis))
        zls = self.text_embed(xls)
        return zis, zls


def nt_xent(zis, zls, temperature=0.1, alpha=0.75):
    zis, zls = F.normalize(zis, dim=1), F.normalize(zls, dim=1)
    logits = zis @ zls.T / temperature
    labels = torch.arange(zis.shape[0])
    return alpha * F.cross_entropy(logits, labels) + (1 - alpha) * F.cross_entropy(logits.T, labels)


def run():
    torch.manual_seed(0)
    model = ConVIRT()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    xis = torch.randn(6, 1, 16, 16)
    xls = torch.randint(0, 50, (6, 10))
    zis, zls = model(xis, xls)
    loss = nt_xent(zis, zls)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
