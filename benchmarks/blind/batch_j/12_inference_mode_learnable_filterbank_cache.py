"""Keyword spotter with a learnable front end (a Conv1d filterbank on raw audio, LEAF-style).
To speed up epochs the trainer caches front-end features per utterance id, computed under
torch.inference_mode(), and .clone()s them as the error message suggests. The classifier
trains on the cached features; the filterbank's gradient is None.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.frontend.filters.weight"
EXPECT = "grad_none"


class LearnableFrontend(nn.Module):
    def __init__(self, n_filters=8, kernel=65, stride=32):
        super().__init__()
        self.filters = nn.Conv1d(1, n_filters, kernel, stride=stride, padding=kernel // 2)

    def forward(self, wave):
        return torch.log1p(self.filters(wave.unsqueeze(1)).pow(2))


class KWSModel(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.frontend = LearnableFrontend()
        self.classifier = nn.Sequential(nn.Conv1d(8, 16, 3, padding=1), nn.ReLU(),
                                        nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, n_classes))


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.feature_cache = {}

    def features(self, utt_ids, wave):
        missing = [i for i, u in enumerate(utt_ids) if u not in self.feature_cache]
        if missing:
            with torch.inference_mode():
                feats = self.model.frontend(wave[missing])  # <-- CUT
            for j, i in enumerate(missing):
                self.feature_cache[utt_ids[i]] = feats[j]
        return torch.stack([self.feature_cache[u].clone() for u in utt_ids])

    def train_step(self, utt_ids, wave, labels):
        logits = self.model.classifier(self.features(utt_ids, wave))
        loss = F.cross_entropy(logits, labels)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    model = KWSModel()
    trainer = Trainer(model)
    wave = torch.randn(4, 1600)
    loss = trainer.train_step(["u0", "u1", "u2", "u3"], wave, torch.tensor([0, 1, 2, 3]))
    return {"model": model, "trainer": trainer, "loss": loss}
