"""The rules for a gradient with inf/nan (status ``nonfinite``, gradscope.diagnosis.rules_zero), each on a real
torch run: the backward node that produced the first non-finite value, and a ``.grad`` no recorded backward
produced (also for zeros: the ``zero_unknown`` twin of ``nonfinite_unknown``) is not pinned on an operation.

Lines are found from marker comments in this file (``# L:<tag>``), never hard-coded (tests/_rules_helpers.py).
"""
from __future__ import annotations


import pytest
import torch
import torch.nn as nn

import gradscope

from _rules_helpers import Markers

M = Markers(__file__)
assert_explains = M.assert_explains

pytestmark = pytest.mark.filterwarnings("ignore")


# --- rule first_nonfinite_node: The backward node that produced the first inf/nan. -----------------------------------

def test_nonfinite_gradient():
    enc = nn.Linear(3, 3)
    with gradscope.trace() as tr:
        a = enc(torch.ones(2, 3))
        dist = (a - a.detach()).pow(2).sum(-1).sqrt()  # L:sqrt0
        dist.sum().backward()
    assert not torch.isfinite(enc.weight.grad).all()
    exp = tr.why(enc.weight)
    assert_explains(exp, "nonfinite_gradient", "weight", "sqrt0", ("epsilon", "clamp", "stable"))


# --- rule nonfinite_unknown (and its twin for zeros, zero_unknown): the trace did not see what produced it -----------

@pytest.mark.parametrize("value, cause", [(0.0, "zero_gradient"), (float("nan"), "nonfinite_gradient")])
def test_a_gradient_no_backward_produced_is_not_pinned_on_an_operation(value, cause):
    """.grad written by hand (no backward in the trace made it): the cause, without a made-up site."""
    w = torch.ones(3, requires_grad=True)
    with gradscope.trace() as tr:
        (w * 2).sum()
        w.grad = torch.full((3,), value)
    exp = tr.why(w)
    assert exp.cause == cause and exp.site is None, exp
    assert "did not" in exp.detail  # (says that the trace did not see where it came from)


def test_a_nonfinite_gradient_from_a_graph_built_before_the_trace_names_the_node():
    w = torch.zeros(3, requires_grad=True)
    y = w.sqrt()  # (built before the trace: no recorded call)
    with gradscope.trace() as tr:
        y.sum().backward()
    exp = tr.why(w)
    assert exp.cause == "nonfinite_gradient" and exp.site is None, exp
    assert "came from SqrtBackward0 (its forward ran outside the trace" in exp.summary, exp.summary
    assert "SqrtBackward0 (SqrtBackward0" not in exp.summary
