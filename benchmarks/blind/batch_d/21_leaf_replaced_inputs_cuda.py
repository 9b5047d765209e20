"""The user wants d loss / d inputs. They set `inputs.requires_grad = True`, then
move the batch with `inputs, targets = inputs.to(device, dtype), targets.to(device)`.
The rebinding replaces the leaf with its copy, so inputs.grad is None after
backward (pytorch/pytorch#12627; on CPU the copy is the float64->float32 cast).
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "leaf_replaced_by_to"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "inputs"
EXPECT = "grad_none"


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    device, dtype = torch.device("cpu"), torch.float32
    inputs = torch.from_numpy(rng.standard_normal((3, 5)))  # float64 from the data pipeline
    targets = torch.tensor([1, 2, 3]).long()
    inputs.requires_grad = True
    inputs, targets = inputs.to(device, dtype), targets.to(device)  # <-- CUT
    net = nn.Sequential(nn.Linear(5, 5), nn.LogSoftmax(dim=-1)).to(device)
    net.train()
    optimizer = torch.optim.Adam(net.parameters(), lr=0.001)
    loss_fn = nn.NLLLoss()
    out = net(inputs[0])
    optimizer.zero_grad()
    loss = loss_fn(out.view(1, 5), targets[0].view(1))
    loss.backward()
    optimizer.step()
    return {"net": net, "inputs": inputs, "loss": loss}
