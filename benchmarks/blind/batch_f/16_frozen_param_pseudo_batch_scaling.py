"""Reproduces MichiganCOG/ViP#7: with a frozen network layer, the pseudo-batch loop that
rescales accumulated gradients (`param.grad *= 1/pseudo_batch_loop`) crashes on a None grad.
After guarding the loop, the question remains why the stem conv has no gradient: the
fine-tune config freezes it with requires_grad = False, so model.conv1.weight.grad is None.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.conv1.weight"
EXPECT = "grad_none"

ARGS = {"batch_size": 4, "pseudo_batch_loop": 2, "freeze": ["conv1"], "lr": 0.01}


class C3DLite(nn.Module):
    def __init__(self, n_cls=4):
        super().__init__()
        self.conv1 = nn.Conv3d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv3d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, n_cls)

    def forward(self, clip):
        x = F.max_pool3d(F.relu(self.conv1(clip)), 2)
        x = F.relu(self.conv2(x))
        return self.fc(x.mean(dim=(2, 3, 4)))


def freeze_layers(model, names):
    for name, param in model.named_parameters():
        if name.split(".")[0] in names:
            param.requires_grad = False  # <-- CUT


def run():
    torch.manual_seed(0)
    model = C3DLite()
    freeze_layers(model, ARGS["freeze"])
    optimizer = torch.optim.SGD(model.parameters(), lr=ARGS["lr"], momentum=0.9)
    clips = torch.randn(ARGS["batch_size"] * ARGS["pseudo_batch_loop"], 3, 4, 8, 8)
    labels = torch.randint(0, 4, (clips.shape[0],))
    optimizer.zero_grad()
    for chunk, lab in zip(clips.split(ARGS["batch_size"]), labels.split(ARGS["batch_size"])):
        loss = F.cross_entropy(model(chunk), lab)
        loss.backward()
    for param in model.parameters():
        if param.grad is not None:
            param.grad *= 1.0 / ARGS["pseudo_batch_loop"]
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
