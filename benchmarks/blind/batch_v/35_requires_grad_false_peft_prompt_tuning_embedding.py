"""Hand-rolled prompt tuning (peft-like) on a frozen LM: the soft prompt is created as a plain
tensor `torch.randn(n_virtual, d) * 0.02` stored on the wrapper (not an nn.Parameter, no
requires_grad), so it never gets a grad; only the task head the user also added trains.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.prompt_embeddings"
EXPECT = "grad_none"


class FrozenLM(nn.Module):
    def __init__(self, vocab=40, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.encoder = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))

    def forward(self, inputs_embeds):
        return self.encoder(inputs_embeds)


class PromptTuningWrapper(nn.Module):
    def __init__(self, base, num_virtual_tokens=4, n_cls=3):
        super().__init__()
        self.base = base
        self.base.requires_grad_(False)
        d = base.embed.embedding_dim
        self.prompt_embeddings = torch.randn(num_virtual_tokens, d) * 0.02  # <-- CUT
        self.classifier = nn.Linear(d, n_cls)

    def forward(self, input_ids):
        tok = self.base.embed(input_ids)
        prompts = self.prompt_embeddings.unsqueeze(0).expand(tok.size(0), -1, -1)
        h = self.base(torch.cat([prompts, tok], dim=1))
        return self.classifier(h[:, 0])


def run():
    torch.manual_seed(0)
    model = PromptTuningWrapper(FrozenLM())
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=3e-2)
    ids, y = torch.randint(0, 40, (4, 6)), torch.tensor([0, 1, 2, 0])
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
