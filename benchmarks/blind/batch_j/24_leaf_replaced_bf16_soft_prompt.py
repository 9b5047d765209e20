"""Soft-prompt tuning of a frozen bfloat16 language-model block (the model is frozen on
purpose). The prompt is created as a float32 leaf with requires_grad=True, then rebound with
prompt = prompt.to(torch.bfloat16) so it matches the model's dtype. Backward reaches the float32
leaf, but the name now points at the bf16 copy, a non-leaf whose .grad is None.
Thread: no forum thread located; reconstructed pattern (see SOURCES.md notes).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "prompt"
EXPECT = "grad_none"

D, VOCAB, N_PROMPT = 32, 50, 4


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.block = nn.TransformerEncoderLayer(D, 4, 64, dropout=0.0, batch_first=True)
        self.lm_head = nn.Linear(D, VOCAB)

    def forward_embeds(self, x):
        return self.lm_head(self.block(x))


def run():
    torch.manual_seed(0)
    model = TinyLM().to(torch.bfloat16)
    model.requires_grad_(False)
    model.eval()
    prompt = torch.randn(N_PROMPT, D, requires_grad=True)
    optimizer = torch.optim.Adam([prompt], lr=1e-2)
    prompt = prompt.to(torch.bfloat16)  # <-- CUT
    tokens = torch.randint(0, VOCAB, (2, 6))
    x = torch.cat([prompt.unsqueeze(0).expand(2, -1, -1), model.embed(tokens)], dim=1)
    logits = model.forward_embeds(x)[:, N_PROMPT:-1]
    loss = F.cross_entropy(logits.float().reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "prompt": prompt, "loss": loss}
