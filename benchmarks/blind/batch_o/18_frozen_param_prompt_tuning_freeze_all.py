"""Prompt tuning on a frozen encoder: the soft prompt is attached as a submodule
first and the whole model is frozen afterwards with model.requires_grad_(False),
which also freezes the prompt. Nothing requires grad, so backward raises
"element 0 of tensors does not require grad".
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = None
EXPECT = "backward_error"


class SoftPrompt(nn.Module):
    def __init__(self, n_tokens, dim):
        super().__init__()
        self.embedding = nn.Parameter(torch.randn(n_tokens, dim) * 0.02)

    def forward(self, tok_emb):
        b = tok_emb.shape[0]
        return torch.cat([self.embedding.unsqueeze(0).expand(b, -1, -1), tok_emb], 1)


class PromptedEncoder(nn.Module):
    def __init__(self, vocab=50, dim=16, n_prompt=4, n_cls=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layer = nn.TransformerEncoderLayer(dim, 2, 32, dropout=0.0, batch_first=True)
        self.cls = nn.Linear(dim, n_cls)
        self.prompt = SoftPrompt(n_prompt, dim)

    def forward(self, ids):
        h = self.layer(self.prompt(self.embed(ids)))
        return self.cls(h.mean(1))


def build(pretrained_state):
    model = PromptedEncoder()
    model.load_state_dict(pretrained_state, strict=False)
    model.requires_grad_(False)  # <-- CUT
    return model


def run():
    torch.manual_seed(0)
    pretrained = PromptedEncoder().state_dict()
    model = build({k: v for k, v in pretrained.items() if not k.startswith("prompt")})
    opt = torch.optim.Adam(model.prompt.parameters(), lr=1e-2)
    ids, y = torch.randint(0, 50, (4, 6)), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
