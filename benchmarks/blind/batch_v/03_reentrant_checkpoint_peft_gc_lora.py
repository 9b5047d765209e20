"""run_clm_pt_with_peft-style training: embeddings and base weights frozen, LoRA in every block,
gradient checkpointing with use_reentrant=True. No input of any checkpointed block requires grad,
so every block output is cut ("None of the inputs have requires_grad=True") and backward raises.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "reentrant_checkpoint"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.blocks[0].q.lora_A.weight"
EXPECT = "backward_error"


class LoraLinear(nn.Module):
    def __init__(self, d, r=4):
        super().__init__()
        self.base = nn.Linear(d, d)
        self.lora_A = nn.Linear(d, r, bias=False)
        self.lora_B = nn.Linear(r, d, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.01)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q = LoraLinear(d)
        self.mlp = nn.Linear(d, d)

    def forward(self, h):
        return h + self.mlp(F.gelu(self.q(h)))


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=40, d=16, n=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.gradient_checkpointing = False

    def forward(self, ids):
        h = self.embed(ids)
        for blk in self.blocks:
            if self.gradient_checkpointing and self.training:
                h = checkpoint(blk, h, use_reentrant=True)  # <-- CUT
            else:
                h = blk(h)
        return self.lm_head(h)


def get_peft_model(model):
    for n, p in model.named_parameters():
        p.requires_grad = "lora_" in n
    return model


class MiniTrainer:
    def __init__(self, model, gradient_checkpointing):
        self.model = model
        model.gradient_checkpointing = gradient_checkpointing
        self.opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)

    def training_step(self, ids):
        self.model.train()
        logits = self.model(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1))
        loss.backward()
        self.opt.step()
        return loss


def run():
    torch.manual_seed(0)
    model = get_peft_model(TinyCausalLM())
    trainer = MiniTrainer(model, gradient_checkpointing=True)
    ids = torch.randint(0, 40, (2, 9))
    loss = trainer.training_step(ids)
    return {"model": model, "loss": loss}
