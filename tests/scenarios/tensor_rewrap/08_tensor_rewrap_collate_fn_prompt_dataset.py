"""Prompt tuning with a Dataset that prepends the learnable soft prompt to every
token-embedding sample (frozen LM, trainable head). The custom collate_fn batches with
`torch.tensor(torch.stack(batch))`, which copies the data: the prompt gets no grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CAUSE = "tensor_rewrap"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "prompt"
EXPECT = "grad_none"


class PromptDataset(Dataset):
    def __init__(self, embs, prompt):
        self.embs, self.prompt = embs, prompt

    def __len__(self):
        return len(self.embs)

    def __getitem__(self, i):
        return torch.cat([self.prompt, self.embs[i]], 0)


def collate(batch):
    return torch.tensor(torch.stack(batch))  # <-- CUT


def run():
    torch.manual_seed(0)
    prompt = nn.Parameter(torch.randn(3, 8) * 0.1)
    frozen_lm = nn.Sequential(nn.Linear(8, 8), nn.Tanh()).requires_grad_(False)
    head = nn.Linear(8, 2)
    embs, labels = torch.randn(6, 5, 8), torch.tensor([0, 1, 0, 1, 1, 0])
    loader = DataLoader(PromptDataset(embs, prompt), batch_size=6, collate_fn=collate)
    opt = torch.optim.Adam([prompt, *head.parameters()], lr=1e-2)
    for xb in loader:
        logits = head(frozen_lm(xb).mean(1))
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"prompt": prompt, "head": head, "opt": opt, "loss": loss}
