"""After unslothai/unsloth#2434 (GRPO: "Inference tensors cannot be saved for backward. To work
around you can make a clone"): the GRPO step reuses the hidden states that the fast generation
path computed under torch.inference_mode(), cloned as the message suggests. The loss now runs,
but only lm_head trains; the transformer body gets .grad None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.body.layers[0].linear1.weight"
EXPECT = "grad_none"


class TinyLM(nn.Module):
    def __init__(self, vocab=32, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.body = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def hidden(self, ids):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1])
        return self.body(self.embed(ids), mask=mask, is_causal=True)


def fast_generate(model, prompt, max_new=4):
    ids = prompt
    with torch.inference_mode():
        for _ in range(max_new):
            logits = model.lm_head(model.hidden(ids)[:, -1])
            ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=1)
        hidden = model.hidden(ids)  # <-- CUT
        old_logps = torch.log_softmax(model.lm_head(hidden), -1)
    return {"ids": ids, "hidden_states": hidden, "old_logps": old_logps}


def reward_fn(ids):
    return (ids[:, -4:] % 2 == 0).float().mean(dim=1)


def grpo_loss(model, gen, n_prompt, beta_clip=0.2):
    ids = gen["ids"].clone()
    hidden = gen["hidden_states"].clone()
    logps = torch.log_softmax(model.lm_head(hidden), -1)
    tgt = ids[:, n_prompt:]
    new = logps[:, n_prompt - 1:-1].gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
    old = gen["old_logps"].clone()[:, n_prompt - 1:-1].gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
    rewards = reward_fn(ids)
    adv = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
    ratio = torch.exp(new - old)
    clipped = torch.clamp(ratio, 1 - beta_clip, 1 + beta_clip)
    return -torch.min(ratio * adv[:, None], clipped * adv[:, None]).mean()


def run():
    torch.manual_seed(0)
    model = TinyLM()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-6)
    prompt = torch.randint(0, 32, (4, 3))
    gen = fast_generate(model, prompt)
    loss = grpo_loss(model, gen, prompt.shape[1])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"model": model, "opt": opt, "loss": loss}
