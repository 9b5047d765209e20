"""Real PyTorch features under a trace: nothing breaks, nothing changes, nothing is misreported.

Each case runs plain and traced from the same seed; the results must be bitwise equal, the
recorder must report no internal error, and a healthy step must get a clean verdict.
"""
from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F  # noqa: F401
from torch.utils.checkpoint import checkpoint

import gradscope


def lstm():
    m = nn.LSTM(4, 8, batch_first=True); h = nn.Linear(8, 2)
    out, _ = m(torch.randn(3, 5, 4)); l = h(out[:, -1]).sum(); l.backward()
    return [p.grad for p in m.parameters()] + [l.detach()]
def mha():
    m = nn.MultiheadAttention(8, 2, batch_first=True); x = torch.randn(2, 5, 8)
    o, w = m(x, x, x); o.sum().backward(); return [p.grad for p in m.parameters()]
def ckpt():
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)); x = torch.randn(3, 4, requires_grad=True)
    y = checkpoint(m, x, use_reentrant=False); y.sum().backward(); return [x.grad] + [p.grad for p in m.parameters()]
def amp():
    m = nn.Linear(8, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = m(torch.randn(2, 8))
    y.float().sum().backward(); return [m.weight.grad]
def sparse():
    e = nn.Embedding(10, 4, sparse=True); y = e(torch.tensor([1, 2, 1])).sum(); y.backward(); return [e.weight.grad.to_dense()]
def cplx():
    w = torch.randn(3, dtype=torch.cfloat, requires_grad=True); (w * w.conj()).real.sum().backward(); return [w.grad]
def func():
    from torch.func import grad, vmap
    f = lambda x: (x.sin() ** 2).sum()
    return [vmap(grad(f))(torch.randn(4, 3))]
def post_acc():
    w = torch.randn(3, requires_grad=True); seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
    (w * 2).sum().backward(); return [w.grad, seen[0]]
def dist():
    mu = torch.zeros(3, requires_grad=True); d = torch.distributions.Normal(mu, 1.0)
    s = d.rsample(); (s ** 2).sum().backward(); return [mu.grad]
def linalg():
    a = torch.randn(4, 4, requires_grad=True); (torch.linalg.inv(a @ a.T + torch.eye(4)).trace() + torch.cdist(a, a).sum()).backward(); return [a.grad]
def loop_inplace():
    w = torch.randn(3, requires_grad=True)
    for _ in range(3):
        l = (w ** 2).sum(); l.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        w.grad.zero_()
    return [w.detach()]
def gru_state():
    m = nn.GRU(3, 4); h = torch.zeros(1, 2, 4)
    for _ in range(2):
        o, h = m(torch.randn(5, 2, 3), h.detach()); o.sum().backward()
    return [p.grad for p in m.parameters()]
def conv_bn_eval():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).eval()
    y = m(torch.randn(2, 3, 8, 8)).mean(); y.backward(); return [p.grad for p in m.parameters()]
def double_bw():
    x = torch.randn(3, requires_grad=True); y = (x ** 3).sum()
    g, = torch.autograd.grad(y, x, create_graph=True); g.sum().backward(); return [x.grad]
def inference_then_train():
    m = nn.Linear(3, 2)
    with torch.inference_mode():
        m(torch.randn(2, 3))
    m(torch.randn(2, 3)).sum().backward(); return [m.weight.grad]
def transformer():
    m = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, batch_first=True), 2)
    m(torch.randn(2, 5, 16)).sum().backward(); return [p.grad for p in m.parameters() if p.grad is not None]


CASES = [lstm, mha, ckpt, amp, sparse, cplx, func, post_acc, dist, linalg, loop_inplace, gru_state,
         conv_bn_eval, double_bw, inference_then_train, transformer]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_feature_is_transparent_and_healthy(case):
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    plain = case()
    torch.manual_seed(0)
    with gradscope.trace() as tr:
        traced = case()
    assert len(plain) == len(traced)
    for a, b in zip(plain, traced):
        assert torch.equal(a, b)
    assert tr.data.meta["internal_errors"] == []
    summary = tr.summary()
    assert summary.ok, [str(p) for p in summary.problems]
    assert tr.graph().source.startswith("digraph")
