"""Trainer whose evaluate() is decorated with @torch.inference_mode()
(snowflakedb/ArcticTraining#265, mixing train and eval): evaluate() caches the
class-prompt embeddings, and the next training steps reuse the cache, cloned to
get past "Inference tensors cannot be saved for backward". text_tower gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.model.text_tower.weight"
EXPECT = "grad_none"


class DualEncoder(nn.Module):
    def __init__(self, vocab=40, d=16):
        super().__init__()
        self.image_tower = nn.Sequential(nn.Linear(32, d), nn.ReLU(), nn.Linear(d, d))
        self.text_tower = nn.EmbeddingBag(vocab, d)

    def encode_text(self, prompts):
        return F.normalize(self.text_tower(prompts), dim=-1)

    def encode_image(self, x):
        return F.normalize(self.image_tower(x), dim=-1)


class Trainer:
    def __init__(self, model, prompts):
        self.model = model
        self.prompts = prompts
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.class_emb = None

    @torch.inference_mode()
    def evaluate(self, x_val, y_val):
        self.model.eval()
        self.class_emb = self.model.encode_text(self.prompts)  # <-- CUT
        logits = self.model.encode_image(x_val) @ self.class_emb.T
        return (logits.argmax(1) == y_val).float().mean().item()

    def train_step(self, x, y):
        self.model.train()
        if self.class_emb is None:
            self.class_emb = self.model.encode_text(self.prompts)
        class_emb = self.class_emb.clone()
        logits = self.model.encode_image(x) @ class_emb.T / 0.07
        loss = F.cross_entropy(logits, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    prompts = torch.randint(0, 40, (5, 6))
    trainer = Trainer(DualEncoder(), prompts)
    x, y = torch.randn(8, 32), torch.randint(0, 5, (8,))
    acc = trainer.evaluate(x, y)
    loss = trainer.train_step(x, y)
    return {"trainer": trainer, "loss": loss, "acc": acc}
