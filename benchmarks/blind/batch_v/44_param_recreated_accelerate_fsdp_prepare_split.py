"""Accelerate + FSDP-style wrapping: the script builds the optimizer from `model.parameters()`,
then prepares the model and the optimizer in separate `accelerator.prepare` calls. Wrapping
flattens the weights into a new FlatParameter, so the optimizer still holds the old tensors,
which never get a grad; the model "trains" with no update.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "param_recreated"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "optimizer.param_groups[0]['params'][0]"
EXPECT = "grad_none"


class FlatParamWrapper(nn.Module):
    """Tiny stand-in for FSDP: one flat Parameter, module weights become views of it."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        self._specs = []
        flat = []
        for mod_name, mod in module.named_modules():
            for name, p in list(mod.named_parameters(recurse=False)):
                self._specs.append((mod, name, p.shape, p.numel()))
                flat.append(p.detach().reshape(-1))
                del mod._parameters[name]
        self.flat_param = nn.Parameter(torch.cat(flat))

    def forward(self, *args):
        offset = 0
        for mod, name, shape, n in self._specs:
            setattr(mod, name, self.flat_param[offset:offset + n].view(shape))
            offset += n
        return self.module(*args)


class Accelerator:
    def __init__(self, use_fsdp=True):
        self.use_fsdp = use_fsdp

    def prepare(self, obj):
        if isinstance(obj, nn.Module) and self.use_fsdp:
            return FlatParamWrapper(obj)
        return obj

    def backward(self, loss):
        loss.backward()


def run():
    torch.manual_seed(0)
    accelerator = Accelerator(use_fsdp=True)
    model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Linear(32, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model = accelerator.prepare(model)  # <-- CUT
    optimizer = accelerator.prepare(optimizer)
    x, y = torch.randn(8, 10), torch.randint(0, 2, (8,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    accelerator.backward(loss)
    optimizer.step()
    return {"model": model, "optimizer": optimizer, "loss": loss}
