"""Goal-reaching reward shaping: the angle between achieved and desired directions uses acos of a
cosine that reaches exactly 1 for an aligned sample, so the policy grad becomes NaN; anomaly mode raises "returned nan values".
Thread: RL reward shaping "nan gradient acos" (reconstructed from memory)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "nondifferentiable_op"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "policy.weight"
EXPECT = "backward_error"


def run():
    torch.manual_seed(0)
    policy = nn.Linear(3, 3, bias=False)
    with torch.no_grad():
        policy.weight.copy_(torch.eye(3))
    obs = torch.tensor([[1.0, 0.0, 0.0], [0.3, 0.5, 0.2]])
    goal = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    direction = policy(obs)
    cos = F.cosine_similarity(direction, goal, dim=-1).clamp(-1.0, 1.0)
    angle = torch.acos(cos)  # <-- CUT
    loss = angle.mean()
    with torch.autograd.detect_anomaly():
        loss.backward()
    return {"policy": policy}
