"""LoRA fine-tuning of a small sequence classifier with a PEFT-style helper. The config
passes modules_to_save=lora_target_modules.append("score"), which is None, so the head
is never unfrozen after the helper freezes every base parameter; "score" only lands in
target_modules. The LoRA adapters train, the classification head's base weight gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.score.base_layer.weight"
EXPECT = "grad_none"


class LoraLinear(nn.Module):
    def __init__(self, base_layer, r=4, alpha=8):
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.Linear(base_layer.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base_layer.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = alpha / r

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(x)) * self.scaling


class LoraConfig:
    def __init__(self, r, lora_alpha, target_modules, modules_to_save=None):
        self.r, self.lora_alpha = r, lora_alpha
        self.target_modules, self.modules_to_save = target_modules, modules_to_save


def get_peft_model(model, config):
    for name, p in model.named_parameters():
        p.requires_grad = False  # <-- CUT
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if child_name in config.target_modules and isinstance(child, nn.Linear):
                setattr(module, child_name, LoraLinear(child, config.r, config.lora_alpha))
    for name in (config.modules_to_save or []):
        for p in getattr(model, name).parameters():
            p.requires_grad = True
    return model


class TinyEncoderClassifier(nn.Module):
    def __init__(self, vocab=100, d=32, num_labels=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.score = nn.Linear(d, num_labels)

    def forward(self, ids):
        h = self.embed(ids)
        att = torch.softmax(self.query(h) @ self.key(h).transpose(1, 2) / 32 ** 0.5, dim=-1)
        h = self.norm(h + att @ self.value(h))
        return self.score(h[:, -1])


def run():
    torch.manual_seed(0)
    model = TinyEncoderClassifier()
    lora_target_modules = ["query", "value"]
    config = LoraConfig(r=4, lora_alpha=8, target_modules=lora_target_modules,
                        modules_to_save=lora_target_modules.append("score"))
    model = get_peft_model(model, config)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    ids = torch.randint(0, 100, (4, 10))
    labels = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(ids), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss, "config": config}
