"""Multi-task prompt tuning with one soft prompt per task in an
nn.ParameterDict. Only the active task's prompt should train, so the script sets
`p.requires_grad = (name == task)`, but the keys are lower-case and the task
comes from the command line as "NER": every prompt is frozen.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.prompts['ner']"
EXPECT = "grad_none"


class PromptTagger(nn.Module):
    def __init__(self, tasks=("ner", "pos", "chunk"), d=16, n_prompt=4):
        super().__init__()
        self.prompts = nn.ParameterDict({t: nn.Parameter(0.02 * torch.randn(n_prompt, d)) for t in tasks})
        self.emb = nn.Embedding(50, d)
        self.enc = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d, 7)

    def forward(self, tokens, task):
        p = self.prompts[task.lower()].expand(tokens.shape[0], -1, -1)
        h = self.enc(torch.cat([p, self.emb(tokens)], dim=1))
        return self.head(h[:, p.shape[1]:])


def set_active_task(model, task):
    for name, p in model.prompts.items():
        p.requires_grad = name == task  # <-- CUT


def run():
    torch.manual_seed(0)
    args_task = "NER"
    model = PromptTagger()
    set_active_task(model, args_task)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    tokens, tags = torch.randint(0, 50, (4, 9)), torch.randint(0, 7, (4, 9))
    loss = F.cross_entropy(model(tokens, args_task).flatten(0, 1), tags.flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
