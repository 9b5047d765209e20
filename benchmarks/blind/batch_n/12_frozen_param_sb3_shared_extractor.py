"""Fine-tuning a pretrained PPO policy: the user freezes everything whose name contains
"extractor", which also matches the new "value_extractor" head meant to train.
Thread: stable-baselines3 "freeze feature extractor" questions (reconstructed from memory)."""
import torch
import torch.nn as nn

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.value_extractor.weight"
EXPECT = "grad_none"


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.features_extractor = nn.Linear(4, 8)
        self.value_extractor = nn.Linear(8, 8)
        self.action_net = nn.Linear(8, 2)
        self.value_net = nn.Linear(8, 1)


def run():
    torch.manual_seed(0)
    policy = Policy()
    for name, p in policy.named_parameters():
        if "extractor" in name:
            p.requires_grad_(False)  # <-- CUT
    opt = torch.optim.Adam([p for p in policy.parameters() if p.requires_grad], 3e-4)
    obs = torch.randn(5, 4)
    f = torch.relu(policy.features_extractor(obs))
    v = policy.value_net(torch.relu(policy.value_extractor(f)))
    logits = policy.action_net(f)
    loss = v.pow(2).mean() - torch.log_softmax(logits, -1)[:, 0].mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"policy": policy}
