"""The event data model: an Event is final when stored (one phase), its kind, context and cut are enum members,
its detail is typed per kind (core/events.py) and keeps the saved format."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

import gradscope
from gradscope.core.events import (EVENT_KINDS, CallDetail, Context, Detail, EventKind, GradSetDetail,
                                   ModuleDetail, RequiresGradDetail, WatchedRequiresGradDetail, detail_of)
from gradscope.core.model import Cause, Event, Site, TensorRef, TraceData

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _program():
    """One step that records most kinds of event (and most detail facts)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    model[2] = nn.Linear(3, 2)  # module_set
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(5, 4)
    k = 2.0
    h = model[0].weight.register_hook(lambda g: g * k)  # hook, with a closure cell
    with torch.no_grad():  # grad_mode
        _ = model(x)
    out = model(x)
    scale = out.detach().abs().mean().item()  # cut (detach), cut (item)
    arr = out.detach().numpy()  # cut (numpy)
    back = torch.from_numpy(np.asarray(arr))  # back from numpy: links
    loss = out.pow(2).mean() / scale + back.sum() * 0
    loss.backward()  # backward
    (g,) = torch.autograd.grad(model[0].bias.sum() * 2, model[0].bias)
    opt.step()  # optimizer_step, inplace (optimizer)
    opt.zero_grad()  # grad_set (zero_grad)
    model[0].bias.requires_grad_(False)  # requires_grad
    y = torch.zeros(3)
    y.add_(1)  # inplace
    h.remove()
    return model


def _trace():
    with gradscope.trace() as tr:
        _program()
    return tr


def test_events_are_built_once_and_final():
    tr = _trace()
    rec = tr._rec
    assert rec.syncer.synced == 0 and not rec.data.events  # nobody asked yet: nothing was converted
    evs = tr.events
    assert evs and all(isinstance(e, Event) for e in evs)
    for e in evs:
        assert e.site is None or isinstance(e.site, Site)
        assert all(isinstance(r, TensorRef) for r in e.inputs + e.outputs)
        assert isinstance(e.inputs, tuple) and isinstance(e.outputs, tuple)
        assert isinstance(e.detail, Detail)
    again = tr.events
    assert again is evs and all(a is b for a, b in zip(again, list(evs)))  # converting twice: the same objects
    rec.sync()
    assert all(a is b for a, b in zip(tr.events, evs))
    assert all(r is None for r in rec.sink.events)  # the raw records were let go once converted


def test_kinds_contexts_and_cuts_are_enum_members():
    tr = _trace()
    kinds = {e.kind for e in tr.events}
    assert {"op", "cut", "inplace", "grad_mode", "grad_set", "backward", "module", "module_set", "optimizer_step",
            "hook", "requires_grad"} <= kinds
    for e in tr.events:
        assert type(e.kind) is EventKind and type(e.context) is Context
        assert e.cut is None or type(e.cut) is Cause and e.cut.is_cut
        assert repr(e.kind) == repr(str(e.kind)) and f"{e.kind}" == str(e.kind) == e.kind.value
    assert list(EVENT_KINDS) == [k.value for k in EventKind]
    assert EventKind.OP == "op" and json.dumps([EventKind.CUT, Context.USER, Cause.DETACH]) == '["cut", "user", "detach"]'


def test_recorded_details_are_typed_by_kind_with_no_fact_left_over():
    tr = _trace()
    for e in tr.events:
        assert e.detail.extra is None, (e, e.detail)  # every fact the recorder writes has a field
    mods = [e for e in tr.events if e.kind == "module"]
    assert mods and all(type(e.detail) is ModuleDetail and e.detail.cls for e in mods)
    zg = [e for e in tr.events if e.kind == "grad_set"]
    assert zg and type(zg[0].detail) is GradSetDetail and zg[0].detail.value is None and zg[0].detail.zero_grad
    back = [e for e in tr.events if e.detail.links]
    assert back and back[0].detail.inferred in ("memory", "value", "shape")
    hooks = [e for e in tr.events if e.kind == "hook"]
    assert hooks and hooks[0].detail.cells and hooks[0].detail.freevars == ["k"]


def test_saved_trace_round_trips_with_the_same_detail_keys(tmp_path):
    tr = _trace()
    p = tmp_path / "t.json"
    tr.save(p)
    saved = json.loads(p.read_text())
    d = TraceData.load(p)
    for e, j in zip(d.events, saved["events"]):
        assert type(e.kind) is EventKind and type(e.context) is Context and e.detail.to_json() == j["detail"]
        assert e.to_json()["kind"] == j["kind"] and e.to_json()["cut"] == j["cut"]
    assert json.loads(json.dumps(d.to_json(), separators=(",", ":")))["events"] == saved["events"]


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_fixture_traces_load_and_save_their_details_as_they_were(path):
    raw = json.loads(path.read_text())
    d = TraceData.from_json(raw)
    for e, j in zip(d.events, raw["events"]):
        assert json.loads(json.dumps(e.to_json()["detail"])) == (j.get("detail") or {})


def test_a_detail_keeps_unknown_keys_and_reads_missing_ones_as_none():
    d = detail_of("inplace", {"target": 3, "from_the_future": [1, 2]})
    assert type(d) is CallDetail and d.target == 3 and d.extra == {"from_the_future": [1, 2]}
    assert d.to_json() == {"target": 3, "from_the_future": [1, 2]}  # written back as it came
    assert d.saved is None and d.links is None  # a fact of its kind, not recorded: None
    assert d.value is None and d.cls is None  # a fact of another kind: None too (any event may be asked)
    with pytest.raises(AttributeError):
        d.no_such_fact  # noqa: B018  (a name no detail type has: a typo, not a fact)
    assert d["target"] == 3 and d.get("base", "-") == "-" and "target" in d and dict(d.items())["target"] == 3
    assert d == {"target": 3, "from_the_future": [1, 2]}


def test_an_unknown_kind_or_context_loads_as_a_plain_string_with_a_base_detail():
    e = Event.from_json({"index": 0, "kind": "teleport", "op": "x", "site": None, "context": "elsewhere",
                         "detail": {"a": 1}})
    assert e.kind == "teleport" and type(e.kind) is str and e.context == "elsewhere"
    assert type(e.detail) is Detail and e.detail.extra == {"a": 1} and e.to_json()["detail"] == {"a": 1}
    e2 = Event.from_json({"index": 0, "kind": "module", "op": "m", "site": None})
    assert type(e2.detail) is ModuleDetail and e2.detail.to_json() == {} and e2.context == "user"


def test_none_is_written_where_it_is_a_fact():
    assert detail_of("grad_set", {"value": None}).to_json() == {"value": None}
    assert detail_of("grad_read", {"found": None, "cleared_by": 4}).to_json() == {"found": None, "cleared_by": 4}
    w = detail_of("requires_grad", {"value": False, "watch_step": None})
    assert type(w) is WatchedRequiresGradDetail and w.to_json() == {"value": False, "watch_step": None}
    r = detail_of("requires_grad", {"value": True})
    assert type(r) is RequiresGradDetail and r.to_json() == {"value": True}
    assert detail_of("module_set", {"attr": "a", "tied": False}).to_json() == {"attr": "a", "tied": False}


def test_an_event_given_strings_and_a_dict_types_them():
    e = Event(0, "cut", "torch.Tensor.detach", None, cut="detach", context="user", detail={"target": 1})
    assert type(e.kind) is EventKind and type(e.cut) is Cause and type(e.context) is Context
    assert type(e.detail) is CallDetail and e.detail.target == 1


def test_a_late_module_path_rebuilds_the_converted_event_instead_of_editing_it():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(2, 2)

        def forward(self, x):
            return self.head(x)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(x)

    net = Net()
    with gradscope.trace() as tr:
        net.block.head = nn.Linear(2, 2)  # replaced before the model was called: its path is not known yet
        first = [e for e in tr.events if e.kind == "module_set"]  # (a query while recording converts it)
        net(torch.randn(1, 2)).sum().backward()
        late = [e for e in tr.events if e.kind == "module_set"]
    assert len(first) == len(late) == 1
    assert first[0].op == "head" and first[0].detail.attr == "head"  # the stored Event was not edited
    assert late[0] is not first[0] and late[0].op == "block.head" and late[0].detail.attr == "block.head"
    assert tr.events[late[0].index] is late[0]
