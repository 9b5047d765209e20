"""gradscope.testing.assert_gradients_flow and the ``gradscope_trace`` pytest fixture."""
from __future__ import annotations

import importlib.metadata
import inspect
import textwrap

import pytest
import torch
from torch import nn

import gradscope
from gradscope.testing import assert_gradients_flow

pytest_plugins = ["pytester"]


class Healthy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


class Detached(Healthy):
    def forward(self, x):
        h = torch.tanh(self.fc1(x)).detach()  # the cut
        return self.fc2(h)


DETACH_LINE = inspect.getsourcelines(Detached.forward)[1] + 1


def training_step(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step():
        opt.zero_grad()
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        opt.step()

    return step


def test_healthy_model_passes():
    model = Healthy()
    tr = assert_gradients_flow(model, training_step(model))
    assert isinstance(tr, gradscope.Trace)
    assert all(p.grad is not None for p in model.parameters())


def test_detach_fails_with_cause_and_line():
    model = Detached()
    with pytest.raises(AssertionError) as ei:
        assert_gradients_flow(model, training_step(model))
    msg = str(ei.value)
    assert "2 of 4 trainable parameters of Detached" in msg
    assert "- fc1.weight, fc1.bias: .grad is None" in msg
    assert "fc2.weight" not in msg
    assert "detach" in msg
    assert f"test_testing.py:{DETACH_LINE}" in msg


class TwoCuts(nn.Module):
    """Three layers cut off at two lines, and one head never called: three causes, seven parameters."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.c = nn.Linear(4, 4)
        self.unused = nn.Linear(4, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        h = self.b(self.a(x)).detach()  # cut 1: a and b
        h = h + torch.from_numpy(self.c(x).detach().numpy())  # cut 2: c
        return self.out(h)


def test_one_explanation_per_cause_not_per_parameter():
    model = TwoCuts()
    with pytest.raises(AssertionError) as ei:
        assert_gradients_flow(model, training_step(model))
    msg = str(ei.value)
    assert "8 of 10 trainable parameters of TwoCuts (3 causes)" in msg
    assert msg.count("  cause: ") == 3, msg  # one explanation per cause
    items = [ln for ln in msg.splitlines() if ln.startswith("- ")]
    assert items[0].startswith("- a.weight, a.bias, b.weight, b.bias: .grad is None"), items
    assert items[1].startswith("- c.weight, c.bias: .grad is None"), items
    assert items[2].startswith("- unused.weight, unused.bias: .grad is None"), items
    line1 = inspect.getsourcelines(TwoCuts.forward)[1] + 1
    blocks = msg.split("\n- ")[1:]
    assert f"test_testing.py:{line1}" in blocks[0] and "cause: detach" in blocks[0]
    assert f"test_testing.py:{line1 + 1}" in blocks[1] and "cause: numpy_roundtrip" in blocks[1]
    assert "`unused`" in blocks[2]


def test_exclude_frozen_and_stale_grads():
    model = Detached()
    step = training_step(model)
    # excluding the starved module makes it pass
    assert_gradients_flow(model, step, exclude=("fc1",))
    assert_gradients_flow(model, step, exclude=("fc1.*",))
    # a stale gradient from an earlier step cannot hide the cut
    model.fc1.weight.grad = torch.ones_like(model.fc1.weight)
    with pytest.raises(AssertionError, match="fc1.weight.grad is None"):
        assert_gradients_flow(model, lambda: model(torch.randn(2, 4)).sum().backward())
    # frozen parameters are not trainable, so they are not checked
    model.fc1.requires_grad_(False)
    assert_gradients_flow(model, lambda: model(torch.randn(2, 4)).sum().backward())


def test_zero_and_nonfinite_gradients():
    model = nn.Linear(3, 1)
    zero_step = lambda: (model(torch.randn(4, 3)) * 0).sum().backward()  # noqa: E731
    with pytest.raises(AssertionError, match="weight.grad is all zeros"):
        assert_gradients_flow(model, zero_step)
    assert_gradients_flow(model, zero_step, allow_zero=True)
    nan_step = lambda: (model(torch.randn(4, 3)) * float("nan")).sum().backward()  # noqa: E731
    with pytest.raises(AssertionError, match=r"- weight, bias: \.grad is not finite"):
        assert_gradients_flow(model, nan_step, allow_zero=True)


def test_step_exception_carries_diagnosis():
    model = nn.Linear(4, 8)

    def step():
        h = torch.sigmoid(model(torch.randn(2, 4)))
        h.mul_(2)
        h.sum().backward()

    with pytest.raises(RuntimeError, match="inplace") as ei:
        assert_gradients_flow(model, step)
    notes = "\n".join(getattr(ei.value, "__notes__", []))
    assert "inplace_saved_tensor" in notes


# --------------------------------------------------------------------------- pytest plugin
def _plugin_args():
    """Load the plugin by hand only when the pytest11 entry point is not installed."""
    eps = importlib.metadata.entry_points(group="pytest11")
    return [] if any(ep.value == "gradscope.pytest_plugin" for ep in eps) else ["-p", "gradscope.pytest_plugin"]


def test_fixture_reports_on_failure(pytester):
    pytester.makepyfile(test_model=textwrap.dedent("""\
        import torch

        def test_healthy(gradscope_trace):
            w = torch.ones(3, requires_grad=True)
            (w * 2).sum().backward()
            gradscope_trace.check()
            assert gradscope_trace.events

        def test_cut(gradscope_trace):
            fc1, fc2 = torch.nn.Linear(3, 3), torch.nn.Linear(3, 1)
            out = fc2(fc1(torch.ones(2, 3)).detach())
            out.sum().backward()
            assert fc1.weight.grad is not None

        def test_backward_error(gradscope_trace):
            a = torch.ones(3, requires_grad=True)
            h = torch.sigmoid(a)
            h.mul_(2)
            h.sum().backward()

        def test_plain_failure():
            assert 1 == 2
    """))
    result = pytester.runpytest_subprocess(*_plugin_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=3)
    out = result.stdout.str()
    # each failing traced test gets a report section; the untraced one does not
    sections = out.split("- gradscope report -")
    assert len(sections) == 3
    cut, error = sections[1], sections[2]
    assert "fc1.weight" in cut and "detach" in cut and "test_model.py:11" in cut
    assert "inplace_saved_tensor" in error and "test_model.py:18" in error  # the trace saw the exception
    assert "could not render" not in out
