"""GRPO-style trainer with num_iterations > 1 (huggingface/trl#2983): generation runs
under torch.inference_mode() and the trainer caches the policy's hidden states
from that pass to reuse them over the next optimisation iterations. They raised
"Inference tensors cannot be saved for backward", so they are .clone()d as the
message suggests; the loss runs, but the policy backbone gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "inference_mode"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "trainer.policy.backbone[0].weight"
EXPECT = "grad_none"


class TinyPolicy(nn.Module):
    def __init__(self, vocab=32, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.backbone = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.lm_head = nn.Linear(d, vocab)

    def hidden(self, ids):
        return self.backbone(self.embed(ids))

    def forward(self, ids):
        return self.lm_head(self.hidden(ids))


class GRPOTrainer:
    def __init__(self, num_iterations=2, num_generations=4):
        self.policy = TinyPolicy()
        self.optimizer = torch.optim.AdamW(self.policy.parameters(), lr=1e-4)
        self.num_iterations = num_iterations
        self.num_generations = num_generations
        self._buffered = None

    def _generate_and_score(self, prompt_ids):
        with torch.inference_mode():
            ids = prompt_ids.repeat(self.num_generations, 1)
            hidden = self.policy.hidden(ids)  # <-- CUT
            old_logps = F.log_softmax(self.policy.lm_head(hidden), -1)
            completion = old_logps.argmax(-1)
            rewards = (completion % 2 == 0).float().mean(-1)
        adv = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
        return {"hidden": hidden.clone(), "completion": completion.clone(),
                "old_logps": old_logps.clone(), "advantages": adv.clone()}

    def compute_loss(self, batch):
        logits = self.policy.lm_head(batch["hidden"])
        logps = F.log_softmax(logits, -1).gather(-1, batch["completion"].unsqueeze(-1)).squeeze(-1)
        old = batch["old_logps"].gather(-1, batch["completion"].unsqueeze(-1)).squeeze(-1)
        ratio = torch.exp(logps - old)
        return -(ratio * batch["advantages"].unsqueeze(-1)).mean()

    def training_step(self, prompt_ids, step):
        if step % self.num_iterations == 0:
            self._buffered = self._generate_and_score(prompt_ids)
        self.optimizer.zero_grad()
        loss = self.compute_loss(self._buffered)
        loss.backward()
        self.optimizer.step()
        return loss.detach()


def run():
    torch.manual_seed(0)
    trainer = GRPOTrainer()
    prompt_ids = torch.randint(0, 32, (1, 6))
    losses = [trainer.training_step(prompt_ids, step) for step in range(2)]
    return {"trainer": trainer, "losses": losses}
