"""Training only the LM head of a model with tied word embeddings
(huggingface/transformers#31467, #11903: "the LM head is tied to the embeddings").
The script unfreezes lm_head, then freezes the input embeddings as a last step.
They are the same Parameter, so lm_head is frozen too and backward() raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class TinyGemma(nn.Module):
    def __init__(self, vocab=40, d=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.norm = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.embed_tokens.weight  # tie_word_embeddings=True

    def forward(self, ids):
        return self.lm_head(self.norm(self.layers(self.embed_tokens(ids))))


def setup_trainable(model):
    for name, param in model.named_parameters():
        param.requires_grad = False
    for param in model.lm_head.parameters():
        param.requires_grad = True
    model.embed_tokens.weight.requires_grad = False  # <-- CUT


def run():
    torch.manual_seed(0)
    model = TinyGemma()
    setup_trainable(model)
    optimizer = torch.optim.AdamW([p for p in model.lm_head.parameters()], lr=1e-4)
    ids = torch.randint(0, 40, (2, 8))
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 40), ids[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss}
