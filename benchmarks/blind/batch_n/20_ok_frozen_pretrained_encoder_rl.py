"""Control: RL agent on a frozen pretrained visual encoder (requires_grad_(False) and encoding
under no_grad, on purpose); the policy head trains and has a nonzero grad.
Thread: SB3 custom features extractor with a frozen pretrained CNN (reconstructed from memory)."""
import torch
import torch.nn as nn

CAUSE = "ok"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "head.weight"
EXPECT = "grad_ok"


def run():
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(10, 6), nn.ReLU())
    encoder.requires_grad_(False)
    head = nn.Linear(6, 3)
    obs = torch.randn(5, 10)
    with torch.no_grad():
        feats = encoder(obs)
    logits = head(feats)
    acts = logits.argmax(-1)
    adv = torch.randn(5)
    loss = -(torch.log_softmax(logits, -1).gather(1, acts[:, None]).squeeze(1) * adv).mean()  # <-- CUT
    loss.backward()
    return {"head": head, "encoder": encoder}
