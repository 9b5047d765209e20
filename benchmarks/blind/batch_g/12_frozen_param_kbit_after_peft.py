"""Resume LoRA fine-tuning: the adapter is loaded with PeftModel.from_pretrained,
then gradient checkpointing is enabled and prepare_model_for_kbit_training(model)
is called, which freezes every parameter it finds, including the LoRA A/B
matrices. Printing requires_grad shows False everywhere; lora_A gets no .grad.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.base_model.layers[0].q_proj.lora_A.weight"
EXPECT = "grad_none"


class LoraLinear(nn.Module):
    def __init__(self, base: nn.Linear, r=4, alpha=8):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.02)
        self.scaling = alpha / r

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(x)) * self.scaling


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, h):
        att = torch.softmax(self.q_proj(h) @ h.transpose(1, 2) / h.shape[-1] ** 0.5, -1) @ self.v_proj(h)
        return self.norm(h + att + self.mlp(h))


class TinyLM(nn.Module):
    def __init__(self, vocab=40, d=16, n_layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([Block(d) for _ in range(n_layers)])
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        h = self.embed_tokens(ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(h)


class PeftModel(nn.Module):
    @classmethod
    def from_pretrained(cls, base, target_modules=("q_proj", "v_proj")):
        peft = cls()
        peft.base_model = base
        for p in base.parameters():
            p.requires_grad = False
        for layer in base.layers:
            for name in target_modules:
                setattr(layer, name, LoraLinear(getattr(layer, name)))
        return peft

    def forward(self, ids):
        return self.base_model(ids)


def prepare_model_for_kbit_training(model, use_gradient_checkpointing=True):
    for name, param in model.named_parameters():
        param.requires_grad = False  # <-- CUT
    if use_gradient_checkpointing:
        model.base_model.embed_tokens.register_forward_hook(lambda m, i, o: o.requires_grad_(True))
    return model


def run():
    torch.manual_seed(0)
    base = TinyLM()
    model = PeftModel.from_pretrained(base)
    model = prepare_model_for_kbit_training(model)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable or [nn.Parameter(torch.zeros(1))], lr=2e-4)

    ids = torch.randint(0, 40, (2, 8))
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 40), ids[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss, "n_trainable": len(trainable)}
