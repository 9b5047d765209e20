"""Control (bowang-lab/MedSAM#233): MedSAM fine-tuning keeps the prompt encoder
frozen by running it under torch.no_grad(), while the image encoder and mask
decoder train. The no_grad block only covers the box embedding, so
mask_decoder.0.weight gets a normal gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.mask_decoder[0].weight"
EXPECT = "grad_ok"


class MedSAM(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.image_encoder = nn.Sequential(nn.Conv2d(1, d, 3, padding=1), nn.ReLU())
        self.prompt_encoder = nn.Linear(4, d)
        self.mask_decoder = nn.Sequential(nn.Conv2d(d, d, 3, padding=1), nn.ReLU(), nn.Conv2d(d, 1, 1))
        for p in self.prompt_encoder.parameters():
            p.requires_grad = False

    def forward(self, image, box):
        image_embedding = self.image_encoder(image)
        with torch.no_grad():
            sparse_embeddings = self.prompt_encoder(box)
        h = image_embedding + sparse_embeddings[:, :, None, None]
        return self.mask_decoder(h)


def run():
    torch.manual_seed(0)
    model = MedSAM()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    image = torch.randn(2, 1, 8, 8)
    box = torch.tensor([[1.0, 1.0, 6.0, 6.0], [0.0, 2.0, 5.0, 7.0]]) / 8
    gt = (torch.rand(2, 1, 8, 8) > 0.5).float()
    pred = model(image, box)
    loss = F.binary_cross_entropy_with_logits(pred, gt) + (1 - (2 * (pred.sigmoid() * gt).sum() + 1) / (pred.sigmoid().sum() + gt.sum() + 1))  # <-- CUT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
