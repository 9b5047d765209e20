"""SAC: the entropy coefficient is read as ent_coef = log_ent_coef.exp().item() once and reused
in the ent-coef loss, so log_ent_coef never learns (backward still runs via the actor term).
Thread: DLR-RM/stable-baselines3 SAC ent_coef auto tuning (reconstructed from memory)."""
import torch
import torch.nn as nn

CAUSE = "item_roundtrip"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "log_ent_coef"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    actor = nn.Linear(3, 2)
    log_ent_coef = torch.zeros(1, requires_grad=True)
    obs = torch.randn(5, 3)
    log_prob = torch.log_softmax(actor(obs), -1)[:, 0]
    target_entropy = -2.0
    ent_coef = log_ent_coef.exp().item()  # <-- CUT
    ent_coef_loss = -(ent_coef * (log_prob + target_entropy)).mean()
    actor_loss = (ent_coef * log_prob).mean()
    (ent_coef_loss + actor_loss).backward()
    return {"log_ent_coef": log_ent_coef}
