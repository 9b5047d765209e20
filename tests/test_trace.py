"""gradscope.trace's facade on real torch steps: ``tr.check()`` passes a healthy step and raises on a buggy one
(naming the cause, the line and the parameter), and ``tr.why()`` by name, with close names suggested for an
unknown one and a clear error for a tensor the trace never saw.

Lines are found from ``# L:<tag>`` markers in this file, never hard-coded (tests/_rules_helpers.py)."""
from __future__ import annotations

import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope
from gradscope import UnknownTargetError

from _rules_helpers import Markers

M = Markers(__file__)
BASENAME = M.basename
line = M.line

pytestmark = pytest.mark.filterwarnings("ignore")


class MLP(nn.Module):
    def __init__(self, detach=False):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)
        self.detach = detach

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.detach:
            h = h.detach()  # L:mlp_detach
        return self.fc2(h)


def _step(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = F.cross_entropy(model(torch.randn(6, 4)), torch.tensor([0, 1, 1, 0, 1, 0]))
    opt.zero_grad()
    loss.backward()
    opt.step()


def test_check_passes_on_healthy_step():
    model = MLP()
    with gradscope.trace() as tr:
        _step(model)
    tr.check()  # must not raise
    assert tr.summary().ok


def test_check_raises_on_buggy_step():
    model = MLP(detach=True)
    with gradscope.trace() as tr:
        _step(model)
    with pytest.raises(AssertionError) as ei:
        tr.check()
    msg = str(ei.value)
    assert "detach" in msg
    assert f"{BASENAME}:{line('mlp_detach')}" in msg
    assert "fc1.weight" in msg


def test_why_by_name():
    model = MLP()
    with gradscope.trace() as tr:
        _step(model)
    exp = tr.why("fc1.weight")
    assert exp.cause == "ok"
    assert "fc1.weight" in exp.summary
    assert tr.why("model.fc1.weight").target == exp.target


def test_why_unknown_name_lists_close_names():
    model = MLP()
    with gradscope.trace() as tr:
        _step(model)
    with pytest.raises(UnknownTargetError) as ei:
        tr.why("fc1.wieght")
    assert "fc1.weight" in str(ei.value)
    assert isinstance(ei.value, LookupError)


def test_why_unseen_tensor_raises_clear_error():
    model = MLP()
    with gradscope.trace() as tr:
        _step(model)
    stranger = torch.randn(7, 3, requires_grad=True)
    with pytest.raises(UnknownTargetError) as ei:
        tr.why(stranger)
    msg = str(ei.value)
    assert re.search(r"never seen", msg)
    assert "[7, 3]" in msg


def test_every_public_method_and_property_of_trace_says_what_it_does():
    import inspect

    missing = [n for n, v in inspect.getmembers(gradscope.Trace) if not n.startswith("_")
               and not (v.__doc__ if isinstance(v, property) else inspect.getdoc(v))]
    assert not missing, missing


def test_an_alert_prints_as_one_short_line_in_a_list():
    from gradscope.watch.log import Alert

    a = Alert("stopped", 150, ["enc.weight"], "enc.weight stopped receiving gradients", since=149,
              explanation={"cause": "frozen_param", "summary": "x" * 500}, changes=["requires_grad"],
              frozen_at=[{"params": ["enc.weight"], "step": 150, "site": {"stack": [["f.py", 1, "g", "x"]] * 40}}])
    shown = repr([a])
    assert "enc.weight stopped receiving gradients" in shown and len(shown) < 200, shown
    assert "why (traced step None): frozen_param" in str(a)  # (str() still tells the whole story)
