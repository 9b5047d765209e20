"""Training only "new neurons": ActiveGradsHook objects are registered on every
parameter and each returns torch.zeros(grad.shape), so after backward the weight grad
is all zeros. The user is puzzled that the weights still change, which comes from
SGD's weight_decay, not from the (zeroed) gradient.
"""
import torch
import torch.nn as nn

CAUSE = "hook_modified"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "model.weight"
EXPECT = "grad_zero"


class ActiveGradsHook:
    def __init__(self, name):
        self.name = name

    def __call__(self, grad):
        try:
            return torch.zeros(grad.shape)  # <-- CUT
        except Exception as e:
            print(e)


def train(model):
    initial_weights = model.weight.clone()
    optimizer = torch.optim.SGD(model.parameters(), lr=1, momentum=0, weight_decay=1)
    inputs = torch.rand(2, 3)
    action_target = torch.rand(2, 2)
    action_output = model(inputs)
    loss = nn.MSELoss()(action_target, action_output)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    changed = bool((initial_weights[0][0] != model.weight[0][0]).item())
    return loss, changed


def train_new_neurons(model):
    for name, param in model.named_parameters():
        hook = ActiveGradsHook(name)
        param.register_hook(hook)
    return train(model)


def run():
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    loss, changed = train_new_neurons(model)
    return {"model": model, "loss": loss, "changed": changed}
