"""Control (huggingface/transformers#21598, enable_input_require_grads): a frozen
LM with LoRA adapters runs its blocks under checkpoint(..., use_reentrant=True);
a forward hook on the input embeddings calls output.requires_grad_(True), so the
reentrant checkpoint has a grad-requiring input and the LoRA weights train.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.layers[0].lora_B.weight"
EXPECT = "grad_ok"


class LoraBlock(nn.Module):
    def __init__(self, d=16, r=4):
        super().__init__()
        self.base = nn.Linear(d, d)
        self.lora_A = nn.Linear(d, r, bias=False)
        self.lora_B = nn.Linear(r, d, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.02)

    def forward(self, h):
        return h + F.gelu(self.base(h) + self.lora_B(self.lora_A(h)))


class CausalLM(nn.Module):
    def __init__(self, vocab=30, d=16, n_layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(LoraBlock(d) for _ in range(n_layers))
        self.lm_head = nn.Linear(d, vocab)

    def get_input_embeddings(self):
        return self.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, ids):
        h = self.embed_tokens(ids)
        for layer in self.layers:
            h = checkpoint(layer, h, use_reentrant=True)
        return self.lm_head(h)


def run():
    torch.manual_seed(0)
    model = CausalLM()
    for n, p in model.named_parameters():
        p.requires_grad_("lora_" in n)
    model.enable_input_require_grads()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    ids = torch.randint(0, 30, (2, 6))
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 30), ids[:, 1:].reshape(-1))  # <-- CUT
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
