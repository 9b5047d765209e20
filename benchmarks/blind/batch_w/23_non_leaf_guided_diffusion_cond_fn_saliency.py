"""guided-diffusion classifier guidance turned into a saliency probe: cond_fn makes
x_in = x.detach().requires_grad_(True) correctly, but then rescales it to [0, 1]
for the classifier and the user reads the gradient of that rescaled tensor, a
non-leaf without retain_grad(); its .grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "probe['x_img']"
EXPECT = "grad_none"


class NoisyClassifier(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.time_embed = nn.Linear(1, 8)
        self.out = nn.Linear(8, num_classes)

    def forward(self, x, t):
        h = F.silu(self.conv(x) + self.time_embed(t[:, None].float() / 1000)[:, :, None, None])
        return self.out(h.mean((2, 3)))


def cond_fn(classifier, x, t, y, probe, classifier_scale=1.0):
    x_in = x.detach().requires_grad_(True)
    x_img = (x_in + 1) / 2  # <-- CUT
    probe["x_img"] = x_img
    logits = classifier(x_img, t)
    log_probs = F.log_softmax(logits, dim=-1)
    selected = log_probs[range(len(logits)), y.view(-1)]
    selected.sum().backward()
    return x_in.grad * classifier_scale


def run():
    torch.manual_seed(0)
    classifier = NoisyClassifier()
    classifier.requires_grad_(False)
    x = torch.randn(2, 3, 8, 8)
    t = torch.tensor([500, 500])
    y = torch.tensor([1, 2])
    probe = {}
    guidance = cond_fn(classifier, x, t, y, probe)
    return {"probe": probe, "guidance": guidance, "classifier": classifier}
