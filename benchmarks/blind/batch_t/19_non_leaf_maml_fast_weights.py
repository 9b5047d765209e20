"""MAML: the user inspects fast_weights[0].grad after the outer backward to debug the inner loop;
the fast weights are non-leaf tensors without retain_grad, so .grad is None.
Thread: MAML fast weights grad is None (reconstructed)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CUT_LINE_MARK = "# <-- CUT"
CAUSE = "non_leaf_no_retain_grad"
QUERY = 'fast[0]'
EXPECT = "grad_none"

def forward(x, params):
    h = torch.relu(F.linear(x, params[0], params[1]))
    return F.linear(h, params[2], params[3])

def run():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
    meta_opt = torch.optim.Adam(net.parameters(), 1e-3)
    params = list(net.parameters())
    xs, xq = torch.randn(10, 3), torch.randn(10, 3)
    ys, yq = xs.sum(1, keepdim=True), xq.sum(1, keepdim=True)
    inner = F.mse_loss(forward(xs, params), ys)
    grads = torch.autograd.grad(inner, params, create_graph=True)
    fast = [p - 0.01 * g for p, g in zip(params, grads)]  # <-- CUT
    outer = F.mse_loss(forward(xq, fast), yq)
    meta_opt.zero_grad(); outer.backward(); meta_opt.step()
    return {"net": net, "fast": fast}
