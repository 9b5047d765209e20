"""The trace's lifecycle: it holds no tensors, survives exceptions, cleans up after itself,
and composes with nesting, threads, other modes, torch.func, torch.compile and decorators."""
from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack
from torch.utils.flop_counter import FlopCounterMode

import gradscope
from gradscope.errors import GradscopeError

HERE = Path(__file__).resolve()
_SRC = HERE.read_text().splitlines()


def line_of(marker: str) -> int:
    tag = f"# L:{marker}"
    hits = [i + 1 for i, text in enumerate(_SRC) if text.rstrip().endswith(tag)]
    assert len(hits) == 1, f"marker {tag!r} found {len(hits)} times"
    return hits[0]


def global_hook_sizes():
    from torch.nn.modules import module as M
    from torch.optim import optimizer as O

    return (len(M._global_forward_pre_hooks), len(M._global_forward_hooks),
            len(M._global_module_registration_hooks), len(M._global_parameter_registration_hooks),
            len(O._global_optimizer_pre_hooks), len(O._global_optimizer_post_hooks))


def assert_clean(hooks_before):
    assert _get_current_function_mode_stack() == []
    assert global_hook_sizes() == hooks_before
    assert torch.is_grad_enabled()
    assert not torch.is_inference_mode_enabled()


def ops(tr):
    return [e.op for e in tr.events if e.kind not in ("module", "grad_mode")]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


# --- weakness -------------------------------------------------------------------------------------
def test_trace_keeps_no_tensor_alive():
    big = torch.randn(1000, 1000, requires_grad=True)  # 4 MB
    r_big = weakref.ref(big)
    with gradscope.trace() as tr:
        y = big * 2
        z = y.sin()  # sin saves y: the graph holds y while z lives
        loss = z.sum()
        loss.backward()
    r_y, r_z = weakref.ref(y), weakref.ref(z)
    assert tr.data.tensors[tr.resolve(big)].alive
    del big, y, z, loss
    gc.collect()
    assert r_big() is None and r_y() is None and r_z() is None
    assert tr.events  # the trace lives on
    assert not any(t.alive for t in tr.data.tensors.values())


def test_a_trace_whose_block_raised_keeps_none_of_the_failing_frames_alive():
    """The error's traceback holds every frame of the failing call and their locals: the trace must not keep it."""
    refs = []

    def step():
        model = nn.Linear(300, 300)
        h = model(torch.randn(8, 300)).detach()
        refs.extend([weakref.ref(model), weakref.ref(h)])
        h.sum().backward()  # raises: h does not require grad

    tr = gradscope.trace()
    with pytest.raises(RuntimeError, match="does not require grad"):
        with tr:
            step()
    gc.collect()
    assert [r() for r in refs] == [None, None]
    assert tr.failure is not None and tr.failure.cause == "detach"


def test_trace_keeps_no_graph_alive_without_backward():
    x = torch.randn(3, requires_grad=True)
    with gradscope.trace() as tr:
        y = torch.randn(500, 500) * x.sum()
        z = y.sin()  # saves y
        z.mul_(1)
    r_y = weakref.ref(y)
    del y, z
    gc.collect()
    assert r_y() is None
    assert len(tr.events) >= 4


def test_why_on_a_tensor_keeps_nothing_alive():
    x = torch.randn(1000, 1000, requires_grad=True)
    r = weakref.ref(x)
    with gradscope.trace() as tr:
        (x * 2).sum().backward()
    assert tr.why(x).cause == "ok"
    del x
    gc.collect()
    assert r() is None


def test_model_dies_and_trace_stays_usable(tmp_path):
    model = MLP()
    r_model, r_w = weakref.ref(model), weakref.ref(model.fc1.weight)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        loss = model(torch.randn(4, 8)).pow(2).mean()
        loss.backward()
        opt.step()
    del model, opt, loss
    gc.collect()
    assert r_model() is None and r_w() is None
    exp = tr.why("fc1.weight")
    assert exp.cause == "ok" and exp.target
    assert tr.why("model.fc2.bias").cause == "ok"
    with pytest.raises(gradscope.UnknownTargetError, match="fc1.weight|Closest"):
        tr.why("fc1.wieght")
    p = tmp_path / "t.json"
    tr.save(p)
    loaded = gradscope.load(p)
    assert loaded.why("fc1.weight").cause == "ok"
    assert [e.op for e in loaded.events] == [e.op for e in tr.events]


# --- exceptions -------------------------------------------------------------------------------
def test_exception_propagates_unchanged_and_everything_is_restored():
    before = global_hook_sizes()
    model = MLP()
    err = ValueError("bad batch")
    with pytest.raises(ValueError) as ei:
        with gradscope.trace() as tr:
            h = model(torch.randn(2, 8))
            with torch.no_grad():
                h = h * 2
                raise err  # L:raise
    assert ei.value is err
    assert str(ei.value) == "bad batch"
    assert_clean(before)
    assert not tr.recording
    assert tr.data.exception.type == "ValueError" and tr.data.exception.message == "bad batch"
    assert tr.data.exception.site.lineno == line_of("raise")
    assert tr.failure is not None
    assert len(tr.events) > 0
    # nothing records any more
    n = len(tr.events)
    torch.randn(3) * 2
    model(torch.randn(1, 8))
    assert len(tr.events) == n


def test_exception_inside_inference_mode_and_module_forward():
    before = global_hook_sizes()

    class Boom(nn.Module):
        def forward(self, x):
            raise RuntimeError("forward failed")

    model = nn.Sequential(nn.Linear(2, 2), Boom())
    with pytest.raises(RuntimeError, match="forward failed"):
        with gradscope.trace() as tr:
            with torch.inference_mode():
                model(torch.randn(1, 2))
    assert_clean(before)
    assert tr.data.exception.type == "RuntimeError"
    # a later trace starts with a clean module stack
    with gradscope.trace() as tr2:
        nn.Linear(2, 2)(torch.randn(1, 2))
    lin = [e for e in tr2.events if e.op == "torch.nn.functional.linear"]
    assert len(lin) == 1 and lin[0].module in ("", "linear")  # its own root, no stale parent path
    assert_clean(before)


def test_base_exception_propagates_and_cleans_up():
    before = global_hook_sizes()
    with pytest.raises(KeyboardInterrupt):
        with gradscope.trace() as tr:
            torch.randn(2) + 1
            raise KeyboardInterrupt
    assert_clean(before)
    assert tr.data.exception.type == "KeyboardInterrupt"


def test_inplace_error_carries_gradscope_note():
    x = torch.randn(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as ei:
        with gradscope.trace() as tr:
            s = x.sigmoid()
            s.mul_(2)  # L:note-write
            s.sum().backward()
    notes = getattr(ei.value, "__notes__", [])
    assert len(notes) == 1 and notes[0].startswith("gradscope:")
    assert f"test_lifecycle.py:{line_of('note-write')}" in notes[0]
    assert "s.mul_(2)" in notes[0]
    assert tr.failure.cause == "inplace_saved_tensor"
    assert tr.data.exception.message.startswith("one of the variables needed for gradient computation")
    assert tr.data.backwards[-1].error.startswith("RuntimeError: one of the variables")


def test_recorder_failure_never_breaks_the_program(monkeypatch):
    from gradscope._record._calls import Calls

    def broken(self, *a, **k):
        raise RuntimeError("recorder bug")

    monkeypatch.setattr(Calls, "_pre", broken)
    x = torch.randn(3, requires_grad=True)
    with gradscope.trace() as tr:
        y = (x * 2).sum()
        y.backward()
    assert torch.equal(x.grad, torch.full((3,), 2.0))
    assert any("recorder bug" in m for m in tr.data.meta["internal_errors"])


def test_same_trace_object_cannot_nest_itself():
    before = global_hook_sizes()
    tr = gradscope.trace()
    with pytest.raises(GradscopeError, match="already recording"):
        with tr:
            with tr:
                pass
    assert_clean(before)


def test_unstarted_trace():
    tr = gradscope.trace()
    assert repr(tr) == "<gradscope.Trace (not started)>"
    with pytest.raises(GradscopeError, match="not recorded anything"):
        tr.data


# --- nesting and other modes -------------------------------------------------------------------------
def test_nested_traces_both_record():
    before = global_hook_sizes()
    model = MLP()
    x = torch.randn(2, 8)
    w = torch.randn(2, 1, requires_grad=True)

    def inner_block():
        h = model(x)
        s = h.sum().item()
        arr = h.detach().numpy()
        back = torch.from_numpy(arr)
        y = h.sigmoid()
        y.mul_(s)
        with torch.no_grad():
            _ = h * 2
        loss = (back * w).sum() + y.sum()
        torch.autograd.grad(loss, [w], retain_graph=True)
        try:
            loss.backward()
        except RuntimeError:
            pass
        return loss

    with gradscope.trace() as outer:
        a = model(x)  # L:nest-before
        with gradscope.trace() as inner:
            inner_block()  # L:nest-inner
        c = model(x)  # L:nest-after
    assert_clean(before)

    def sig(e):
        return (e.kind, e.op, e.cut, e.module, e.context, tuple((f.lineno, f.function) for f in e.site.stack),
                e.grad_enabled, tuple(sorted(k for k in e.detail if k not in ("links", "saved_by", "target",
                                                                                 "base", "roots", "inputs"))))

    inner_sig = [sig(e) for e in inner.events]
    assert len(inner_sig) > 15
    assert all(e.site.stack[0].lineno == line_of("nest-inner") for e in inner.events)
    # the outer trace saw exactly the same calls for the inner block, and nothing of the
    # inner trace's own bookkeeping (gradient norms, value lookups)
    mid = [sig(e) for e in outer.events if e.site.stack[0].lineno == line_of("nest-inner")]
    assert mid == inner_sig
    assert [e.module for e in outer.events if e.op == "torch.nn.functional.linear"] == ["fc1", "fc2"] * 3
    assert len(inner.data.backwards) == len(outer.data.backwards) == 2
    assert inner.data.meta["internal_errors"] == outer.data.meta["internal_errors"] == []
    for tr in (inner, outer):
        assert [c.cut for c in tr.cuts()] == [c.cut for c in inner.cuts()]
    assert torch.equal(a, c)


class Recording(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls.append(func)
        return func(*args, **(kwargs or {}))


# read-only introspection (no computation) that gradscope's bookkeeping may do on a tensor
_INTROSPECTION = frozenset([getattr(torch.Tensor, n).__get__ for n in (
    "shape", "dtype", "device", "requires_grad", "grad_fn", "_version", "_base", "is_leaf", "grad", "is_sparse",
    "is_cpu")]
    + [getattr(torch.Tensor, n) for n in (
        "untyped_storage", "data_ptr", "dim", "size", "numel", "is_floating_point", "storage_offset", "stride",
        "_is_view")])


def _non_property(calls):
    return [f for f in calls if f not in _INTROSPECTION]


@pytest.mark.parametrize("where", ["user_mode_inside", "user_mode_outside"])
def test_other_torch_function_mode(where):
    before = global_hook_sizes()
    x = torch.randn(3, requires_grad=True)
    plain = Recording()
    with plain:
        ref = (x * 2).sin().sum()
    mode = Recording()
    if where == "user_mode_inside":
        with gradscope.trace() as tr:
            with mode:
                y = (x * 2).sin().sum()  # L:mode-op-inside
    else:
        with mode:
            with gradscope.trace() as tr:
                y = (x * 2).sin().sum()  # L:mode-op-outside
    assert_clean(before)
    assert torch.equal(y, ref)
    assert [e.op for e in tr.events] == ["torch.Tensor.mul", "torch.Tensor.sin", "torch.Tensor.sum"]
    # the site is the user's line, not the user mode's __torch_function__
    assert all(e.site.lineno == line_of(f"mode-op-{where.split('_')[-1]}") and Path(e.site.filename).resolve() == HERE
               for e in tr.events), [str(e.site) for e in tr.events]
    # the user's mode still sees exactly the user's calls (gradscope's own bookkeeping reads
    # tensor properties and storage pointers, which an outer mode may see; no computation leaks)
    assert _non_property(mode.calls) == _non_property(plain.calls)


def test_user_mode_left_open_across_the_trace_end():
    before = global_hook_sizes()
    x = torch.randn(3)
    m = Recording()
    with gradscope.trace() as tr:
        m.__enter__()
        x * 2
    assert _get_current_function_mode_stack() == [m]  # as it would be without the trace
    assert any("another TorchFunctionMode" in u for u in tr.data.unseen)
    m.__exit__(None, None, None)
    assert_clean(before)
    assert [e.op for e in tr.events] == ["torch.Tensor.mul"]


@pytest.mark.parametrize("order", ["dispatch_inside", "dispatch_outside"])
def test_torch_dispatch_mode_flop_counter(order):
    a, b = torch.randn(8, 8, requires_grad=True), torch.randn(8, 8)
    with FlopCounterMode(display=False) as fc:
        (a @ b).sum().backward()
    plain = fc.get_total_flops()
    ga = a.grad.clone()
    a.grad = None
    if order == "dispatch_inside":
        with gradscope.trace() as tr:
            with FlopCounterMode(display=False) as fc:
                (a @ b).sum().backward()
    else:
        with FlopCounterMode(display=False) as fc:
            with gradscope.trace() as tr:
                (a @ b).sum().backward()
    assert fc.get_total_flops() == plain
    assert torch.equal(a.grad, ga)
    assert ops(tr) == ["torch.Tensor.matmul", "torch.Tensor.sum", "Tensor.backward"]
    assert tr.data.backwards[0].leaf_grads[tr.resolve(a)].status == "received"


# --- threads ---------------------------------------------------------------------------------------
def test_each_thread_records_only_its_own_ops():
    before = global_hook_sizes()
    traces, errors = {}, []
    barrier = threading.Barrier(2, timeout=30)

    def work(name, k):
        try:
            model = nn.Linear(3, 3)
            a = torch.randn(3, requires_grad=True)
            with gradscope.trace() as tr:
                barrier.wait()  # both traces are active at once
                for _ in range(30):
                    a = a * k if name == "mul" else a + k
                model(a).sum().backward()
                barrier.wait()
            traces[name] = tr
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n, k)) for n, k in (("mul", 2.0), ("add", 3.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert_clean(before)
    for name, other in (("mul", "add"), ("add", "mul")):
        tr = traces[name]
        arith = [op for op in ops(tr) if op in ("torch.Tensor.mul", "torch.Tensor.add")]
        assert arith == [f"torch.Tensor.{name}"] * 30, (name, ops(tr))
        assert len([e for e in tr.events if e.kind == "module"]) == 1
        assert len(tr.data.backwards) == 1
        assert tr.why("weight").cause == "ok"


def test_other_threads_ops_are_not_recorded():
    model = nn.Linear(2, 2)
    done = threading.Event()

    def other():
        model(torch.randn(1, 2)).sum().backward()
        done.set()

    with gradscope.trace() as tr:
        x = torch.randn(2) * 2
        t = threading.Thread(target=other)
        t.start()
        t.join(30)
    assert done.is_set()
    assert ops(tr) == ["torch.randn", "torch.Tensor.mul"]
    assert not [e for e in tr.events if e.kind == "module"]
    assert model.weight.grad is not None


# --- torch.func -------------------------------------------------------------------------------------
def test_torch_func_transforms():
    from torch.func import grad, jacrev, vmap

    def f(v):
        return (v.sin() * 2).sum()

    v = torch.randn(3)
    batch = torch.randn(4, 3)
    plain = (grad(f)(v), vmap(lambda r: r.sin() * 2)(batch), jacrev(torch.sin)(v))
    with gradscope.trace() as tr:
        traced = (grad(f)(v), vmap(lambda r: r.sin() * 2)(batch), jacrev(torch.sin)(v))
    for p, t in zip(plain, traced):
        assert torch.equal(p, t)
    assert torch.equal(traced[0], 2 * v.cos())
    assert tr.data.meta["internal_errors"] == []
    assert "torch.Tensor.sin" in ops(tr)
    assert tr.cuts() == []  # functorch's own requires_grad_/autograd.grad are not user cuts
    assert {e.context for e in tr.events} <= {"user", "functorch"}


# --- torch.compile --------------------------------------------------------------------------------
@pytest.mark.slow
def test_torch_compile_eager_backend_no_recompiles():
    import torch._dynamo
    from torch._dynamo.utils import counters

    def f(x, w):  # L:compiled-def
        return (torch.relu(x @ w) * 2).sum()  # L:compiled-body

    x = torch.randn(4, 3)
    w = torch.randn(3, 2, requires_grad=True)
    ref = f(x, w)
    ref.backward()
    gref = w.grad.clone()
    w.grad = None

    torch._dynamo.reset()
    counters.clear()
    cf = torch.compile(f, backend="eager")
    before = global_hook_sizes()
    with gradscope.trace() as tr:
        outs = [cf(x, w) for _ in range(10)]  # L:compiled-call
        outs[-1].backward()  # L:compiled-backward
    assert_clean(before)
    for o in outs:
        assert torch.equal(o, ref)
    assert torch.equal(w.grad, gref)
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])
    assert counters["frames"]["total"] == counters["frames"]["ok"] == 1, dict(counters["frames"])
    assert len(tr.data.backwards) == 1
    assert tr.data.meta["internal_errors"] == []
    # every op inside the compiled function is at its own line (from the frames Dynamo traced), not at
    # the def line of the frame Dynamo runs the graph in; its stack still starts at the call
    for e in tr.events:
        assert e.site is not None and Path(e.site.filename).resolve() == HERE, e
        if e.kind == "backward":
            assert e.site.lineno == line_of("compiled-backward")
            continue
        assert e.site.lineno == line_of("compiled-body"), e
        assert e.site.stack[0].lineno == line_of("compiled-call"), e
        assert e.site.function.endswith("f"), e
    assert len([e for e in tr.events if e.op == "torch.Tensor.matmul"]) == 10
    assert any("source lines of the frames torch.compile traced" in n for n in tr.data.unseen), tr.data.unseen
    torch._dynamo.reset()


@pytest.mark.slow
def test_function_compiled_before_the_trace():
    import torch._dynamo
    from torch._dynamo.utils import counters

    def g(x):
        return torch.tanh(x) * 3

    torch._dynamo.reset()
    counters.clear()
    cg = torch.compile(g, backend="eager")
    x = torch.randn(5)
    warm = cg(x)
    with gradscope.trace() as tr:
        outs = [cg(x) for _ in range(6)]
    assert all(torch.equal(o, warm) for o in outs)
    assert torch.equal(warm, g(x))
    assert counters["stats"]["unique_graphs"] <= 2, dict(counters["stats"])  # at most one guard-driven recompile
    assert tr.data.meta["internal_errors"] == []
    torch._dynamo.reset()


# --- decorator, steps, max_events -------------------------------------------------------------------
def test_decorator_records_each_call_and_keeps_the_latest():
    before = global_hook_sizes()
    model = MLP()
    deco = gradscope.trace()

    @deco
    def step(x, scale=1.0):
        loss = model(x).sum() * scale  # L:deco-body
        loss.backward()
        return loss

    out = step(torch.randn(2, 8), scale=2.0)
    assert_clean(before)
    assert step.gradscope_trace is deco
    assert step.__name__ == "step"
    assert out.requires_grad and out.grad_fn is not None
    n1 = len(deco.events)
    assert n1 > 0 and len(deco.data.backwards) == 1
    body = [e for e in deco.events if e.op == "torch.Tensor.mul"]
    assert len(body) == 1 and body[0].site.lineno == line_of("deco-body")
    assert body[0].site.stack[0].function.endswith("step")  # stack starts at the decorated function
    step(torch.randn(3, 8))
    assert len(deco.events) == n1  # the latest call's recording, not an accumulation
    assert deco.events[0].inputs[0].shape == (3, 8)
    with pytest.raises(ZeroDivisionError):
        deco(lambda: 1 / 0)()
    assert deco.data.exception.type == "ZeroDivisionError"
    assert_clean(before)


def test_decorator_is_reentrant_across_threads():
    """Two threads inside one decorated function at once: both run the user's code, each call
    gets a whole trace of its own."""
    before = global_hook_sizes()
    barrier = threading.Barrier(2, timeout=30)
    results, errors = {}, []

    @gradscope.trace()
    def step(name, k):
        model = nn.Linear(3, 1)
        a = torch.randn(4, 3, requires_grad=True)
        barrier.wait()  # both calls are recording now
        for _ in range(10):
            a = a * k if name == "mul" else a + k
        loss = model(a).sum()
        loss.backward()
        barrier.wait()
        return model

    def work(name, k):
        try:
            results[name] = step(name, k)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n, k)) for n, k in (("mul", 2.0), ("add", 3.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert_clean(before)
    assert set(results) == {"mul", "add"}
    assert all(m.weight.grad is not None for m in results.values())  # the user's code ran in both
    assert len(step.traces) == 2 and step.last_trace in step.traces
    assert step.traces[0] is not step.traces[1]
    by_op = {}
    for tr in step.traces:
        arith = [op for op in ops(tr) if op in ("torch.Tensor.mul", "torch.Tensor.add")]
        assert len(set(arith)) == 1 and len(arith) == 10, arith  # only its own thread's ops
        by_op[arith[0]] = tr
        assert len(tr.data.backwards) == 1 and not tr.recording
    assert set(by_op) == {"torch.Tensor.mul", "torch.Tensor.add"}
    assert by_op["torch.Tensor.mul"].why(results["mul"].weight).cause == "ok"
    assert step.gradscope_trace.events == step.last_trace.events  # the decorating Trace shows the latest


def test_decorator_is_reentrant_under_recursion():
    model = MLP()

    @gradscope.trace()
    def depth(n):
        if n:
            return depth(n - 1) + model(torch.randn(2, 8)).sum()
        return model(torch.randn(2, 8)).sum()

    loss = depth(2)
    loss.backward()
    assert model.fc1.weight.grad is not None
    assert len(depth.traces) == 3  # innermost finishes first
    assert [len([e for e in tr.events if e.kind == "module" and e.op.endswith("MLP")]) for tr in depth.traces] \
        == [1, 2, 3], [[e.op for e in tr.events if e.kind == "module"] for tr in depth.traces]
    assert depth.last_trace is depth.traces[-1]


def test_steps_stops_after_n_backward_calls():
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    with gradscope.trace(steps=2) as tr:
        for i in range(5):
            opt.zero_grad()
            loss = model(torch.randn(4, 8)).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert len(tr.data.backwards) == 2
    assert tr.data.truncated
    assert any("steps=2" in u for u in tr.data.unseen)
    last_bw = tr.data.backwards[-1].event
    assert tr.events[-1].index == last_bw  # nothing recorded after the second backward
    assert len(losses) == 5 and all(l == l for l in losses)  # the loop itself ran on
    assert not tr.recording


def test_max_events_caps_recording():
    x = torch.randn(3, requires_grad=True)
    with gradscope.trace(max_events=7) as tr:
        y = x
        for _ in range(50):
            y = y * 1.01
        y.sum().backward()
    assert len(tr.events) == 7
    assert tr.data.truncated
    assert any("max_events" in u for u in tr.data.unseen)
    assert torch.allclose(x.grad, torch.full((3,), 1.01 ** 50))


class _CutNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(self.fc1(x).detach())


@pytest.mark.slow
def test_torch_compile_module_with_global_hooks(recwarn):
    """torch.compile(module) inlines global module hooks: gradscope's must stay out of the graph,
    must not add torch's 'global hooks' warning, and must explain the cut honestly."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = _CutNet()
    cm = torch.compile(m, backend="aot_eager")
    x = torch.randn(3, 4)
    plain = cm(x)
    plain.sum().backward()
    g_plain = m.fc2.weight.grad.clone()
    m.zero_grad()
    with gradscope.trace() as tr:
        out = cm(x)
        out.sum().backward()
    assert torch.equal(out, plain) and torch.equal(m.fc2.weight.grad, g_plain)
    assert m.fc1.weight.grad is None
    assert not [w for w in recwarn if "global hooks" in str(w.message)]
    exp = tr.why(m.fc1.weight)
    assert exp.target == "fc1.weight"  # (no `cm.` prefix from the graph module aot_eager runs)
    assert exp.cause == "unknown" and "compile" in exp.summary and "eager_compile=True" in exp.fix
    assert "connected" not in exp.summary and "sent it no gradient" in exp.summary  # judged by arrival only
    assert tr.why(m.fc2.weight).cause == "ok"
    assert any("torch.compile" in note for note in tr.data.unseen)


class _CompiledNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.side = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        _ = self.side(h)  # L:side-dropped
        h = h.detach()  # L:compiled-detach
        return self.fc2(h)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torch_compile_lines_and_unused_layers(backend):
    """Inside a compiled forward the cut is at its own line: from the frames Dynamo traced
    (backend='eager'), or with eager_compile=True (any backend); a layer whose output is dropped is
    unused, not 'connected to the loss'."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = _CompiledNet()
    cm = torch.compile(m, backend=backend)
    x = torch.randn(3, 4)
    plain = cm(x)
    plain.sum().backward()
    g_plain = m.fc2.weight.grad.clone()
    m.zero_grad()
    before = global_hook_sizes()
    with gradscope.trace(eager_compile=backend != "eager") as tr:
        out = cm(x)
        out.sum().backward()
    assert_clean(before)
    assert torch._dynamo.eval_frame._stance.stance == "default"  # the stance is restored
    assert torch.allclose(out, plain) and torch.allclose(m.fc2.weight.grad, g_plain)
    exp = tr.why(m.fc1.weight)
    assert exp.cause == "detach" and exp.site.lineno == line_of("compiled-detach"), exp
    side = tr.why(m.side.weight)
    assert side.cause == "unused_parameter" and "connected" not in side.summary, side
    assert side.site.lineno == line_of("side-dropped"), side
    # and the trace says which way it got the lines
    how = "eager_compile=True" if backend != "eager" else "source lines of the frames torch.compile traced"
    assert any(how in n for n in tr.data.unseen), tr.data.unseen
    assert tr.why(m.fc2.weight).cause == "ok"
    torch._dynamo.reset()


def test_eager_compile_stance_is_restored_on_exceptions():
    with pytest.raises(ValueError), gradscope.trace(eager_compile=True):
        assert torch._dynamo.eval_frame._stance.stance == "force_eager"
        raise ValueError("boom")
    assert torch._dynamo.eval_frame._stance.stance == "default"


# --- optimizer.step(): the recorder leaves the mode stack for the step's internals -------------
def test_optimizer_internals_run_outside_the_mode_and_it_comes_back():
    before = global_hook_sizes()
    model = MLP()
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    seen = []
    with gradscope.trace() as tr:
        opt.register_step_pre_hook(lambda o, a, k: seen.append(list(_get_current_function_mode_stack())))
        model(torch.randn(4, 8)).sum().backward()
        opt.step()  # L:suspend-step
        after = list(_get_current_function_mode_stack())
        y = torch.randn(3) * 2  # L:suspend-after
    assert_clean(before)
    assert seen == [[]]  # the user's step pre-hook ran while the recorder was off the stack
    assert len(after) == 1 and after[0] is not None
    assert [e.kind for e in tr.events if e.site.lineno == line_of("suspend-step")] == ["optimizer_step", "inplace"]
    assert [e.op for e in tr.events if e.site.lineno == line_of("suspend-after")] == [
        "torch.randn", "torch.Tensor.mul"]
    assert y.shape == (3,)


def test_optimizer_step_that_raises_leaves_everything_restored():
    before = global_hook_sizes()
    model = MLP()

    class Exploding(torch.optim.SGD):
        def step(self, closure=None):
            super().step(closure)
            raise FloatingPointError("loss scale overflow")  # L:raising-raise

    opt = Exploding(model.parameters(), lr=0.1)
    with pytest.raises(FloatingPointError, match="loss scale overflow"):
        with gradscope.trace() as tr:
            model(torch.randn(4, 8)).sum().backward()
            opt.step()  # L:raising-step
    assert_clean(before)
    assert tr.data.exception.type == "FloatingPointError"
    assert [f.lineno for f in tr.data.exception.site.stack][-2:] == [line_of("raising-step"), line_of("raising-raise")]
    n = len(tr.events)
    model(torch.randn(1, 8)) * 2
    assert len(tr.events) == n


def test_optimizer_step_that_raises_and_is_caught_inside_the_trace():
    before = global_hook_sizes()
    model = MLP()

    class Flaky(torch.optim.SGD):
        calls = 0

        def step(self, closure=None):
            Flaky.calls += 1
            if Flaky.calls == 1:
                raise FloatingPointError("skip this step")
            return super().step(closure)

    opt = Flaky(model.parameters(), lr=0.1)
    with gradscope.trace() as tr:
        for _ in range(2):
            model(torch.randn(4, 8)).sum().backward()  # L:caught-forward
            try:
                opt.step()
            except FloatingPointError:
                pass
    assert_clean(before)
    # the second step's forward (a module call) was recorded again, with its backward
    fwd = [e for e in tr.events if e.site.stack[0].lineno == line_of("caught-forward")
           and e.op == "torch.nn.functional.linear"]
    assert len(fwd) == 4
    assert len(tr.data.backwards) == 2
    assert any("optimizer.step() raised" in u for u in tr.data.unseen), tr.data.unseen


def test_lbfgs_closure_is_recorded():
    before = global_hook_sizes()
    model = MLP()
    x, y = torch.randn(8, 8), torch.randn(8, 1)
    opt = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=3)

    def closure():
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)  # L:lbfgs-loss
        loss.backward()  # L:lbfgs-backward
        return loss

    torch.manual_seed(0)
    ref_model = MLP()
    ref_model.load_state_dict(model.state_dict())
    with gradscope.trace() as tr:
        opt.step(closure)
    assert_clean(before)
    assert len(tr.data.backwards) >= 2
    assert all(tr.events[b.event].site.lineno == line_of("lbfgs-backward") for b in tr.data.backwards)
    assert any(e.op == "torch.nn.functional.mse_loss" and e.site.lineno == line_of("lbfgs-loss") for e in tr.events)
    tr.check()  # every parameter got a finite gradient: raises otherwise


def test_user_mode_above_the_recorder_during_the_step():
    before = global_hook_sizes()
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    mode = Recording()
    with gradscope.trace() as tr:
        model(torch.randn(4, 8)).sum().backward()
        with mode:
            opt.step()  # L:mode-step
    assert_clean(before)
    assert mode.calls  # the user's mode saw the step's internals
    ev = [e for e in tr.events if e.site.lineno == line_of("mode-step")]
    assert [e.kind for e in ev] == ["optimizer_step", "inplace"]
    assert set(ev[1].detail["targets"]) == {tr.resolve(p) for p in model.parameters()}


def test_nested_traces_around_an_optimizer_step():
    before = global_hook_sizes()
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with gradscope.trace() as outer:
        with gradscope.trace() as inner:
            model(torch.randn(4, 8)).sum().backward()
            opt.step()  # L:nested-step
            stack = list(_get_current_function_mode_stack())
            torch.ones(2) + 1  # L:nested-after
    assert_clean(before)
    assert stack == [outer._rec.mode, inner._rec.mode]  # back on the stack, in their order
    for tr in (outer, inner):
        assert [e.kind for e in tr.events if e.site.lineno == line_of("nested-step")] == ["optimizer_step", "inplace"]
        assert [e.op for e in tr.events if e.site.lineno == line_of("nested-after")] == [
            "torch.ones", "torch.Tensor.add"]


def test_module_forward_that_raises_and_is_caught_keeps_module_context_exact():
    """A module whose forward raises (caught by the program inside the trace) must not leave its
    entry on the module stack: later ops get the right module and source line."""
    before = global_hook_sizes()

    class Picky(nn.Module):
        def forward(self, x):
            if x.shape[0] > 2:
                raise ValueError("batch too big")
            return x * 2

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.picky = Picky()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            try:
                return self.picky(x)
            except ValueError:
                x = x + 0  # L:in-except
                return self.fc(x)  # L:fallback

    net = Net()
    with gradscope.trace() as tr:
        net(torch.randn(4, 3))
        y = torch.randn(2, 3) + 1  # L:after-raise
    assert_clean(before)
    (in_except,) = [e for e in tr.events if e.site.lineno == line_of("in-except")]
    assert in_except.module in ("", None)  # Net itself, not the module that raised
    fc = [e for e in tr.events if e.op == "torch.nn.functional.linear"]
    assert len(fc) == 1 and fc[0].module == "fc" and fc[0].site.lineno == line_of("fallback")
    after = [e for e in tr.events if e.site.lineno == line_of("after-raise")]
    assert [e.op for e in after] == ["torch.randn", "torch.Tensor.add"]
    assert all(e.module is None for e in after)
    assert not [e for e in tr.events if e.kind == "module" and e.op == "picky"]  # it never returned
    assert y.shape == (2, 3)


def test_a_parameter_outliving_its_model_is_still_the_traced_one():
    """A helper returns the trace and one parameter; its model is gone (and the trace holds no
    reference on module tensors after the block, see torch.utils.swap_tensors): the parameter
    is still recognised as the one the trace saw."""
    import gc

    def step():
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        with gradscope.trace() as tr:
            with torch.no_grad():
                h = model[1](model[0](torch.randn(5, 4)))
            model[2](h).sum().backward()
        return tr, model[0].weight

    tr, w = step()
    gc.collect()
    e = tr.why(w)
    assert e.cause == "no_grad_block", e
    assert e.target.endswith("0.weight")
