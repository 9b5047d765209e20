"""Memory Aware Synapses continual learning (wannabeOG/MAS-PyTorch#1): the helper that
freezes the first layers of the shared feature extractor has its condition inverted,
so the layers listed as frozen keep requires_grad=True and the layers that should
train are set to requires_grad=False. The asker flipped the condition and the
results changed. Here the last feature layer, meant to train, gets no gradient.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "frozen_param"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.features[2].weight"
EXPECT = "grad_none"


class SharedModel(nn.Module):
    def __init__(self, n_tasks_classes=(4,)):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.classifier = nn.ModuleList([nn.Linear(32, c) for c in n_tasks_classes])
        self.reg_params = {}

    def forward(self, x, task=0):
        return self.classifier[task](self.features(x))


def create_freeze_layers(model, no_of_layers=1):
    frozen = []
    for idx, (name, param) in enumerate(model.features.named_parameters()):
        layer_no = idx // 2
        if layer_no < no_of_layers:
            frozen.append(name)
            param.requires_grad = True
        else:
            param.requires_grad = False  # <-- CUT
    return model, frozen


def init_reg_params(model, frozen):
    for name, param in model.features.named_parameters():
        if name not in frozen:
            model.reg_params[name] = {"omega": torch.zeros_like(param), "init_val": param.detach().clone()}
    return model


def run():
    torch.manual_seed(0)
    model = SharedModel()
    model, frozen = create_freeze_layers(model, no_of_layers=1)
    model = init_reg_params(model, frozen)
    optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01)
    x = torch.randn(8, 16)
    y = torch.randint(0, 4, (8,))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return {"model": model, "loss": loss, "frozen": frozen}
