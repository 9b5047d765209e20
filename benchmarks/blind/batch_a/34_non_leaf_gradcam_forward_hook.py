"""Grad-CAM on a ResNet-like feature extractor (Xiyue-Wang/RetCCL#1 describes the
recipe: forward to the layer, retain_grad on it, forward the rest). The user's
version stores the layer output from a forward hook but skips retain_grad(), so
cam.activations.grad is None after backward().
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "non_leaf_no_retain_grad"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "cam.activations"
EXPECT = "grad_none"


class Net(nn.Module):
    def __init__(self, n_cls=4):
        super().__init__()
        self.layer3 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.layer4 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(16, n_cls)

    def forward(self, x):
        feats = self.layer4(self.layer3(x))  # <-- CUT
        return self.fc(feats.mean(dim=(2, 3)))


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = None
        target_layer.register_forward_hook(self.save_activation)

    def save_activation(self, module, inp, output):
        self.activations = output

    def __call__(self, x, class_idx):
        self.model.zero_grad()
        score = self.model(x)[:, class_idx].sum()
        score.backward()
        grads = self.activations.grad
        if grads is None:
            return torch.zeros(x.shape[0], *x.shape[2:])
        weights = grads.mean(dim=(2, 3), keepdim=True)
        return F.relu((weights * self.activations).sum(1))


def run():
    torch.manual_seed(0)
    model = Net().eval()
    cam = GradCAM(model, model.layer4)
    x = torch.randn(1, 3, 8, 8)
    heatmap = cam(x, class_idx=1)
    return {"model": model, "cam": cam, "heatmap": heatmap}
