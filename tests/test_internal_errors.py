"""No silent swallowing: when a part of the recorder fails, the user's step runs exactly as without
the trace, and the trace says so (a note in ``tr.data.unseen``, shown by the report)."""
from __future__ import annotations

import gc
import weakref

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import gradscope
from gradscope._record._calls import Calls
from gradscope._record._backward import Backward
from gradscope._record._module_facts import ModuleFacts
from gradscope._record._modules import Modules
from gradscope._record._optim import Optim
from gradscope._record._refs import Identity
from gradscope._record._saved import Saved
from gradscope.pytest_plugin import report_text


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def _step(model):
    """Two SGD steps with a module call, an in-place write on a graph value, backward and step."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        h = model[0](x)
        h.mul_(0.5)  # (an in-place write: probed against saved tensors)
        loss = F.mse_loss(model[2](torch.relu(h)), y) + F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in model.parameters()], [p.grad.clone() for p in model.parameters()]


#: one internal helper of each part: call recording, in-place probes, module hooks, backward,
#: optimizer hooks, and the two steps run when the block ends (the component that owns it, its name)
PARTS = [(Calls, "_post"), (Saved, "info"), (Modules, "_module_pre"), (Backward, "_post"),
         (Optim, "step"), (ModuleFacts, "sync_live"), (Identity, "release_params")]


@pytest.mark.parametrize("owner,part", PARTS, ids=[p for _, p in PARTS])
def test_an_internal_failure_leaves_the_step_identical_and_is_reported(owner, part, monkeypatch):
    plain = _step(_model())

    def broken(self, *a, **k):
        raise RuntimeError(f"injected failure in {part}")

    monkeypatch.setattr(owner, part, broken)
    model = _model()
    with gradscope.trace() as tr:
        traced = _step(model)
    assert traced[0] == plain[0]  # the same losses, bit for bit
    for a, b in zip(traced[1] + traced[2], plain[1] + plain[2]):
        assert torch.equal(a, b)
    notes = [n for n in tr.data.unseen if "failed internally" in n]
    assert len(notes) == 1, tr.data.unseen  # said once, however often it failed
    assert f"injected failure in {part}" in notes[0]
    assert any(f"injected failure in {part}" in m for m in tr.data.meta["internal_errors"])
    text = " ".join(report_text(tr, width=200).split())
    assert "failed internally" in text and f"injected failure in {part}" in text
    if part == "release_params":  # releasing failed: still no reference of ours keeps the model alive
        ref = weakref.ref(model[0].weight)
        del model
        gc.collect()
        assert ref() is None


def test_a_trace_without_internal_failures_has_no_such_note():
    with gradscope.trace() as tr:
        _step(_model())
    assert tr.data.meta["internal_errors"] == []
    assert not any("failed internally" in n for n in tr.data.unseen)


def test_the_note_counts_repeated_failures(monkeypatch):
    def broken(self, *a, **k):
        raise RuntimeError("injected")

    monkeypatch.setattr(Calls, "_post", broken)
    x = torch.ones(3, requires_grad=True)
    with gradscope.trace() as tr:
        for _ in range(5):
            x = x * 2
    (note,) = [n for n in tr.data.unseen if "failed internally" in n]
    assert "5 times" in note, note
    assert len(tr.data.meta["internal_errors"]) == 5


def test_a_refused_write_into_a_stale_no_grad_view_is_recorded_not_an_internal_error():
    """Found by the internal-error note on PyTorch's own test_autograd_inplace_views_creation_meta: reading
    grad_fn of a view made under no_grad whose base was then written in place raises; the probe before
    the write must not fail on it (the write was left unrecorded, with an internal error)."""
    a = torch.rand(3, requires_grad=True).clone()
    with torch.no_grad():
        v = a[:2]
    with gradscope.trace() as tr:
        a.mul_(2)
        with pytest.raises(RuntimeError, match="view was created in no_grad mode"):
            v.add_(1)  # L:refused
    assert tr.data.meta["internal_errors"] == []
    assert not any("failed internally" in n for n in tr.data.unseen)
    last = tr.data.events[-1]
    assert last.kind == "inplace" and last.op.endswith("add_") and "view was created" in last.detail["error"]
