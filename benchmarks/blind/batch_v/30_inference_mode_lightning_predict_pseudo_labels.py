"""Self-training with a Lightning-like Trainer: `trainer.predict()` (run under inference_mode)
returns pseudo-labels and the student's own embeddings for the unlabeled batch; the user clones
them and adds a feature-consistency loss. The encoder gets no grad from it; only the head trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.encoder[0].weight"
EXPECT = "grad_none"


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)
        self.proj = nn.Linear(32, 32)

    def predict_step(self, x):
        z = self.encoder(x)
        return {"embeddings": z, "pseudo": self.head(z).argmax(-1)}


class MiniTrainer:
    def predict(self, model, batches):
        outs = []
        with torch.inference_mode():
            for x in batches:
                outs.append(model.predict_step(x))  # <-- CUT
        return outs


def run():
    torch.manual_seed(0)
    model = Student()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    unlabeled = torch.randn(16, 12)
    pred = MiniTrainer().predict(model, [unlabeled])[0]
    z = pred["embeddings"].clone()
    pseudo = pred["pseudo"].clone()
    logits = model.head(z)
    consistency = F.mse_loss(model.proj(z), z.roll(1, 0))
    loss = F.cross_entropy(logits, pseudo) + 0.1 * consistency
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
