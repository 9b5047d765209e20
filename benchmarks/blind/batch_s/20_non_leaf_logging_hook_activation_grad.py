"""Custom training loop with forward hooks for logging: a hook stores each
layer's output in logger.acts, and after backward the logger reads
acts["fc1"].grad to log activation-gradient norms. The stored outputs are
non-leaf tensors without retain_grad(), so their .grad is None."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "logger.acts['fc1']"
EXPECT = "grad_none"


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        h = self.fc1(x)  # <-- CUT
        return self.fc2(torch.relu(h))


class ActLogger:
    def __init__(self, model):
        self.acts = {}
        for name, m in model.named_children():
            m.register_forward_hook(self._make(name))

    def _make(self, name):
        def hook(mod, inp, out):
            self.acts[name] = out
        return hook

    def grad_norms(self):
        return {k: (None if v.grad is None else v.grad.norm().item()) for k, v in self.acts.items()}


def run():
    torch.manual_seed(0)
    model = MLP()
    logger = ActLogger(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 8), torch.randint(0, 4, (6,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    norms = logger.grad_norms()
    opt.step()
    return {"model": model, "logger": logger, "norms": norms, "loss": loss}
