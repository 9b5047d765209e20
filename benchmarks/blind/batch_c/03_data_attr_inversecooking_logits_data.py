"""Inverse-cooking style model: an ingredient decoder and a recipe decoder on top of an
image encoder. The ingredient decoder returns torch.stack(logits, 1).data, so the
ingredient loss has no graph; it is summed with the recipe loss, backward runs and the
encoder trains, but the ingredient decoder's output layer gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_attr"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.ingr_decoder.out.weight"
EXPECT = "grad_none"

N_INGR, N_WORDS, EMB, MAX_INGR, MAX_WORDS = 30, 50, 32, 5, 7


class ImageEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(16, EMB, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, img):
        return self.conv(img).mean(dim=(2, 3))


class IngredientsDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(N_INGR + 1, EMB)
        self.cell = nn.GRUCell(EMB, EMB)
        self.out = nn.Linear(EMB, N_INGR + 1)

    def forward(self, features, ingr_gt):
        h, prev = features, torch.full((features.size(0),), N_INGR, dtype=torch.long)
        logits = []
        for t in range(MAX_INGR):
            h = self.cell(self.embed(prev), h)
            logits.append(self.out(h))
            prev = ingr_gt[:, t]
        logits = torch.stack(logits, 1).data  # <-- CUT
        return logits


class RecipeDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.ingr_embed = nn.Embedding(N_INGR + 1, EMB)
        self.word_embed = nn.Embedding(N_WORDS, EMB)
        self.cell = nn.GRUCell(2 * EMB, EMB)
        self.out = nn.Linear(EMB, N_WORDS)

    def forward(self, features, ingr_gt, words):
        ctx = self.ingr_embed(ingr_gt).mean(dim=1)
        h, out = features, []
        for t in range(MAX_WORDS - 1):
            h = self.cell(torch.cat([self.word_embed(words[:, t]), ctx], dim=1), h)
            out.append(self.out(h))
        return torch.stack(out, 1)


class InverseCookingModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = ImageEncoder()
        self.ingr_decoder = IngredientsDecoder()
        self.recipe_decoder = RecipeDecoder()

    def forward(self, img, ingr_gt, words):
        feats = self.encoder(img)
        ingr_logits = self.ingr_decoder(feats, ingr_gt)
        recipe_logits = self.recipe_decoder(feats, ingr_gt, words)
        losses = {
            "ingr_loss": F.cross_entropy(ingr_logits.reshape(-1, N_INGR + 1), ingr_gt.reshape(-1)),
            "recipe_loss": F.cross_entropy(recipe_logits.reshape(-1, N_WORDS), words[:, 1:].reshape(-1)),
        }
        return losses


def run():
    torch.manual_seed(0)
    model = InverseCookingModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    img = torch.randn(4, 3, 16, 16)
    ingr_gt = torch.randint(0, N_INGR, (4, MAX_INGR))
    words = torch.randint(0, N_WORDS, (4, MAX_WORDS))
    losses = model(img, ingr_gt, words)
    loss = 1.0 * losses["ingr_loss"] + 1.0 * losses["recipe_loss"]
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "losses": losses, "loss": loss}
