"""optimizer.step(closure): the closure is the user's training step (LBFGS; PyTorch Lightning's
automatic optimization runs every training step this way), so it is recorded like one."""
from __future__ import annotations

import inspect

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope


def line_of(marker: str) -> int:
    src = inspect.getsource(__import__(__name__))
    return next(no for no, ln in enumerate(src.splitlines(), 1) if ln.rstrip().endswith(marker))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 8)
        self.head = nn.Linear(8, 2)


def setup(opt_cls=torch.optim.SGD, **kw):
    torch.manual_seed(0)
    model = Net()
    return model, opt_cls(model.parameters(), **kw), torch.randn(8, 6), torch.randint(0, 2, (8,))


@pytest.mark.parametrize("opt_cls, kw", [(torch.optim.SGD, {"lr": 0.1}), (torch.optim.LBFGS, {"max_iter": 3})],
                         ids=["sgd", "lbfgs"])
def test_a_no_grad_block_inside_the_closure_is_named(opt_cls, kw):
    model, opt, x, y = setup(opt_cls, **kw)

    def closure():
        opt.zero_grad()
        with torch.no_grad():
            h = torch.relu(model.enc(x))  # C:nograd
        loss = F.cross_entropy(model.head(h), y)
        loss.backward()
        return loss

    with gradscope.trace() as tr:
        opt.step(closure)
    e = tr.why(model.enc.weight)
    assert e.cause == "no_grad_block"
    assert line_of("# C:nograd") in {e.site.lineno, *(f.lineno for f in e.site.stack)}
    assert tr.why(model.head.weight).cause == "ok"
    assert len(tr.data.backwards) >= 1


def test_a_healthy_closure_step_has_no_problems_and_the_same_result():
    def run(traced):
        model, opt, x, y = setup(torch.optim.LBFGS, max_iter=4)

        def closure():
            opt.zero_grad()
            loss = F.cross_entropy(model.head(torch.relu(model.enc(x))), y)
            loss.backward()
            return loss

        if traced:
            with gradscope.trace() as tr:
                loss = opt.step(closure)
            assert tr.problems() == [], [str(p) for p in tr.problems()]
        else:
            loss = opt.step(closure)
        return loss.item(), [p.detach().clone() for p in model.parameters()]

    (l1, p1), (l2, p2) = run(False), run(True)
    assert l1 == l2
    assert all(torch.equal(a, b) for a, b in zip(p1, p2))


def test_the_optimizer_update_after_a_closure_is_recorded():
    model, opt, x, y = setup()

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(model.head(torch.relu(model.enc(x))), y)
        loss.backward()
        return loss

    with gradscope.trace() as tr:
        opt.step(closure)
    kinds = [e.kind for e in tr.events]
    assert kinds.index("backward") < kinds.index("optimizer_step")  # the step's record follows its closure
    writes = [e for e in tr.events if e.kind == "inplace" and e.op == "SGD.step"]
    assert writes and len(writes[0].detail["targets"]) == 4
