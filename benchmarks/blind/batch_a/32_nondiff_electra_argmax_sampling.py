"""ELECTRA replaced-token detection (richarddwang/electra_pytorch#12: "gradient
computation will be interrupted at argmax in self.sample"). A reimplementation
drops the generator's MLM loss and trains with the discriminator loss only, so the
generator never learns: generator.mlm_head.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.generator.mlm_head.weight"
EXPECT = "grad_none"


class Encoder(nn.Module):
    def __init__(self, vocab=30, d=16, out=None):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.body = nn.Sequential(nn.Linear(d, d), nn.GELU())
        self.mlm_head = nn.Linear(d, out or vocab)

    def forward(self, ids):
        return self.mlm_head(self.body(self.embed(ids)))


class ELECTRAModel(nn.Module):
    def __init__(self, vocab=30):
        super().__init__()
        self.generator = Encoder(vocab)
        self.discriminator = Encoder(vocab, out=1)

    def sample(self, logits):
        gumbel = -torch.log(-torch.log(torch.rand_like(logits) + 1e-9) + 1e-9)
        return (logits.float() + gumbel).argmax(dim=-1)  # <-- CUT

    def forward(self, masked_inputs, is_mlm_applied, labels):
        gen_logits = self.generator(masked_inputs)
        mlm_gen_logits = gen_logits[is_mlm_applied, :]
        pred_toks = self.sample(mlm_gen_logits)
        generated = masked_inputs.clone()
        generated[is_mlm_applied] = pred_toks
        is_replaced = is_mlm_applied.clone()
        is_replaced[is_mlm_applied] = (pred_toks != labels[is_mlm_applied])
        disc_logits = self.discriminator(generated).squeeze(-1)
        return disc_logits, is_replaced


def run():
    torch.manual_seed(0)
    model = ELECTRAModel()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4)
    labels = torch.randint(1, 30, (2, 10))
    is_mlm_applied = torch.rand(2, 10) < 0.3
    masked_inputs = labels.masked_fill(is_mlm_applied, 0)
    disc_logits, is_replaced = model(masked_inputs, is_mlm_applied, labels)
    loss = F.binary_cross_entropy_with_logits(disc_logits, is_replaced.float()) * 50.0
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "loss": loss}
