"""Transparency under PyTorch's own tests: one regression test per root cause that
PyTorch's test suite found, each comparing the traced run with the plain one, plus "stopping
means stopping". A hang or a crash is run in a subprocess with a timeout, so it fails the test
instead of the suite."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch
from torch import nn
from torch.nn.modules import module as M
from torch.optim import optimizer as O
from torch.utils._python_dispatch import TorchDispatchMode

import gradscope
from gradscope._record._recorder import Mode

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _subprocess(body: str, timeout: float) -> str:
    """Run ``body`` (which defines ``step()``) plain and traced in a fresh interpreter; returns its
    stdout. A hang or a crash fails the test with what happened."""
    code = textwrap.dedent(body) + textwrap.dedent("""
        import contextlib, gradscope
        for ctx in (contextlib.nullcontext(), gradscope.trace()):
            with ctx:
                out = step()
            print(out, flush=True)
    """)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env,
                           check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no return after {timeout} s (hang)")
    assert r.returncode == 0, f"process died: exit {r.returncode}\n{r.stderr[-2000:]}"
    return r.stdout


def _ours():
    return [m for m in torch.overrides._get_current_function_mode_stack() if isinstance(m, Mode)]


def _global_hooks():
    return (len(M._global_forward_pre_hooks), len(M._global_forward_hooks),
            len(M._global_forward_hooks_always_called), len(O._global_optimizer_pre_hooks),
            len(O._global_optimizer_post_hooks), len(M._global_module_registration_hooks),
            len(M._global_parameter_registration_hooks))


# --- 1. deadlock: PyTorch's own property writes never reach tensor introspection -------------------
def test_custom_function_marking_a_view_dirty_does_not_deadlock():
    # PyTorch resets the view's hooks (`t._backward_hooks = None`) while holding its autograd lock;
    # reading is_leaf there (as recording the setter would) takes the same lock
    out = _subprocess("""
        import torch

        class AddOne(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        def step():
            a = torch.ones(2, requires_grad=True)
            y = AddOne.apply(a.clone().view_as(a))
            y.sum().backward()
            return y.sum().item(), a.grad.tolist()
    """, timeout=60)
    plain, traced = out.splitlines()
    assert plain == traced == "(4.0, [1.0, 1.0])"


# --- 2. segfault: a deep graph is still freed iteratively ------------------------------------------
def test_deep_graph_is_freed_without_overflowing_the_stack():
    # a graph node that was given a Python object (reading grad_fn) is freed through Python's
    # recursive dealloc; with one on every node a deep chain overflows the C stack
    out = _subprocess("""
        import resource, torch
        resource.setrlimit(resource.RLIMIT_STACK, (2 << 20, resource.getrlimit(resource.RLIMIT_STACK)[1]))

        def step():
            def build():
                y = torch.randn(1, requires_grad=True).clone()
                for _ in range(30_000):
                    y = y + y * 1e-6
            build()
            return "freed"
    """, timeout=240)
    assert out.split() == ["freed", "freed"]


def test_deep_graph_nodes_still_name_their_events():
    # the graph nodes are mapped to the recorded calls without touching them
    x = torch.randn(3, requires_grad=True)
    with gradscope.trace() as tr:
        y = (x * 2).exp()  # L:deep_line
        y.sum().backward()
    rec = tr.data.backwards[-1]
    made = {n.name: n.event for n in rec.nodes.values() if n.event is not None}
    ops = {tr.events[i].op for i in made.values()}
    assert {"torch.Tensor.mul", "torch.Tensor.exp", "torch.Tensor.sum"} <= ops, made


# --- 3. gradscope's own arithmetic is invisible to a user's dispatch mode ---------------------------
class _Log(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args, kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def _dispatch_step():
    a = torch.rand(3, requires_grad=True)
    w = torch.zeros(3, requires_grad=True)  # (a zero gradient: edge norms are measured too)
    with _Log() as log:
        (a * 2 + w * 0).sum().backward()
    return log.seen


def test_user_dispatch_mode_sees_only_the_users_ops():
    plain = _dispatch_step()
    with gradscope.trace():
        traced = _dispatch_step()
    assert traced == plain


# --- 4. AccumulateGrad still steals the gradient buffer --------------------------------------------
class _Keep(torch.autograd.Function):
    ptr = None

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        _Keep.ptr = g.data_ptr()
        return g


def _steal_step():
    x = torch.randn(5, requires_grad=True)
    (_Keep.apply(x) * 2).sum().backward()
    y = torch.randn(4, requires_grad=True)
    (y + 0).sum().backward()  # AddBackward0 passes the gradient it got on, unchanged
    return x.grad.data_ptr() == _Keep.ptr, y.grad.data_ptr()


def test_gradient_buffers_are_stolen_not_copied():
    plain = _steal_step()
    assert plain[0]
    with gradscope.trace() as tr:
        traced = _steal_step()
    assert traced[0], "x.grad is a copy of the buffer the custom backward returned"
    assert tr.why(0).cause is not None  # (the trace still works)


# --- 5. the registry of always-called global forward hooks stays the user's ------------------------
def test_always_called_forward_hook_registry_is_the_users():
    def count():
        h = M.register_module_forward_hook(lambda m, i, o: None, always_call=True)
        n = len(M._global_forward_hooks_always_called)
        h.remove()
        return n

    plain = count()
    with gradscope.trace():
        traced = count()
    assert traced == plain == 1


def test_module_that_raised_inside_the_block_does_not_own_later_ops():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.boom, self.fc = Boom(), nn.Linear(3, 3)

        def forward(self, x):
            try:
                self.boom(x)
            except ValueError:
                pass
            return self.fc(x)

    net = Net()
    with gradscope.trace() as tr:
        net(torch.randn(2, 3)).sum().backward()
        z = torch.randn(2).exp()
    lin = [e for e in tr.events if e.op.endswith("linear")]
    assert lin and lin[0].module == "fc"
    assert [e.module for e in tr.events if e.op == "torch.Tensor.exp"] == [None]
    del z


# --- 6. no weak reference blocks torch.utils.swap_tensors -------------------------------------------
@pytest.fixture
def swap_on_conversion():
    before = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    yield
    torch.__future__.set_swap_module_params_on_conversion(before)


def test_load_state_dict_with_swap_tensors_inside_and_after_the_trace(swap_on_conversion):
    m = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    with gradscope.trace() as tr:
        m(torch.randn(4, 3)).sum().backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)  # (the gradients pass through a recorded call)
        tid = tr.resolve(m[0].weight)
        m.load_state_dict(nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).state_dict())  # inside
        m(torch.randn(4, 3)).sum().backward()
    m.load_state_dict(nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).state_dict())  # after, trace kept
    m.to(torch.float64)  # swaps parameters and their .grad
    assert tr.resolve(m[0].weight) == tid  # the same Python object: still found after the swaps
    assert tr.why("0.weight").target


def test_parameters_are_released_when_the_trace_ends():
    import gc
    import weakref

    m = nn.Linear(3, 3)
    r = weakref.ref(m.weight)
    with gradscope.trace() as tr:
        m(torch.randn(2, 3)).sum().backward()
    del m
    gc.collect()
    assert r() is None
    assert tr.why("weight").cause == "ok"


# --- 7. the attention fast path that any TorchFunctionMode turns off is declared -----------------
def test_attention_fast_path_off_is_said_once_with_the_modules():
    torch.manual_seed(0)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, batch_first=True), 1, enable_nested_tensor=False)
    enc.eval()
    x = torch.rand(2, 4, 16)
    with gradscope.trace() as tr, torch.no_grad():
        enc(x)
        enc(x)
    notes = [n for n in tr.data.unseen if "fast path" in n]
    assert len(notes) == 1, tr.data.unseen
    assert "layers.0.self_attn (MultiheadAttention)" in notes[0] and "layers.0 (TransformerEncoderLayer)" in notes[0]
    assert "Trace the training step, not inference" in notes[0]
    assert "fast path" in _report_text(tr)


def test_attention_in_training_says_nothing_about_a_fast_path():
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.rand(2, 3, 8)
    with gradscope.trace() as tr:
        mha(x, x, x)[0].sum().backward()
        mha.eval()
        mha(x, x, x)  # eval with autograd on: no fast path, traced or not
    assert not any("fast path" in n for n in tr.data.unseen)


def _report_text(tr):
    import io

    from rich.console import Console

    buf = io.StringIO()
    tr.report(console=Console(file=buf, width=200))
    return buf.getvalue()


# --- 8. torch.jit.trace passes its own sanity check ------------------------------------------------
def test_torch_jit_trace_passes_its_check_under_the_trace():
    loss = nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance())
    a, p, n = (torch.randn(5, 10, requires_grad=True) for _ in range(3))
    with gradscope.trace() as tr:
        traced = torch.jit.trace(loss, (a, p, n))  # raises TracingCheckError when gradscope is in the frames
        y = (a * 2).sum()
    assert torch.allclose(traced(a, p, n), loss(a, p, n))
    assert any("torch.jit.trace" in n for n in tr.data.unseen)
    assert [e.op for e in tr.events if e.op.endswith(".mul")]  # recording goes on after it
    del y
    with gradscope.trace() as tr2:  # a traced ScriptModule called as a model: its children are read without error
        traced(a, p, n).backward()
    assert tr2.data.meta["internal_errors"] == [], tr2.data.meta["internal_errors"]
    assert a.grad is not None


def _jit_value_names(mod, inputs):
    g = torch.jit.trace(mod, inputs, check_trace=False).inlined_graph
    return {v.debugName().rstrip("0123456789.") for node in g.nodes() for v in node.outputs()} - {""}


def test_torch_jit_trace_names_no_value_after_gradscopes_locals():
    # the module hooks ran under the JIT tracer: a hook's `t.shape` on a module's output was traced and
    # the value named after the hook's local `t` (in one of two invocations: check_trace failed in
    # PyTorch's test_triplet_margin_with_distance_loss)
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    loss = nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(), swap=True)
    cases = [(model, (torch.randn(2, 4, requires_grad=True),)),
             (loss, tuple(torch.randn(5, 10, requires_grad=True, dtype=torch.double) for _ in range(3)))]
    plain = [_jit_value_names(m, x) for m, x in cases]
    with gradscope.trace() as tr:
        traced = [_jit_value_names(m, x) for m, x in cases]
    for p, t in zip(plain, traced):
        assert t <= p, t - p  # (the names the tracer took from the frames of the user's code, or fewer)
    assert not [e for e in tr.events if e.kind == "module"]  # nothing recorded while the tracer ran


# --- stopping means stopping ---------------------------------------------------------------------
def test_steps_reached_leaves_the_mode_stack_and_the_hooks():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = _global_hooks()
    seen = []
    with gradscope.trace(steps=1) as tr:
        for _ in range(3):
            opt.zero_grad()
            model(torch.randn(2, 4)).sum().backward()
            seen.append((len(_ours()), _global_hooks() == before))
            opt.step()
            seen.append((len(_ours()), _global_hooks() == before))
    assert seen[0] == (1, False)  # recording the first step
    assert seen[1][0] == 0  # off the mode stack from the optimizer step on
    assert all(s == (0, True) for s in seen[2:]), seen  # hooks gone at the next module call
    assert _global_hooks() == before and not _ours()
    assert tr.data.truncated and tr.why(model[0].weight).cause == "ok"


def test_max_events_reached_leaves_even_below_a_users_mode():
    from torch.overrides import TorchFunctionMode

    class Count(TorchFunctionMode):
        n = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            Count.n += 1
            return func(*args, **(kwargs or {}))

    model = nn.Linear(3, 3)
    before = _global_hooks()
    with gradscope.trace(max_events=5) as tr:
        with Count() as user:
            for _ in range(4):
                model(torch.randn(2, 3)).sum()
            stack = torch.overrides._get_current_function_mode_stack()
            assert stack[-1] is user and not _ours()  # the user's mode stays, in place
            assert _global_hooks() == before
        model(torch.randn(2, 3))
    assert len(tr.events) == 5 and tr.data.truncated
    assert not torch.overrides._get_current_function_mode_stack()


def test_batched_gradients_under_vmap_still_flow_through_the_hooks():
    # what a hook keeps of a gradient is a detached alias; a batched gradient (vmap) cannot be detached
    x = torch.randn(3, dtype=torch.double, requires_grad=True)
    with gradscope.trace():
        assert torch.autograd.gradcheck(lambda t: (t * 2).sin(), (x,), check_batched_grad=True)


# --- warnings: as often as plain, from the same place, under every filter action ------------------
_DROP2D = nn.Dropout2d(0.5)  # a 2-D input: F.dropout2d warns (stacklevel=2: the library's line)


def _warning_calls(x):
    """One call per way a warning leaves a traced op, each on its own line (a warning's location)."""
    y = x * 2
    return [
        lambda: y.grad,  # C++ warning on a property read (a non-leaf's .grad: the mode's fast path)
        lambda: torch.tensor(x),  # C++ warning inside a recorded op
        lambda: _DROP2D(torch.ones(2, 3)),  # warnings.warn in a Python-level torch function, in a module
        lambda: torch.autograd.grad((y * y).sum(), x, only_inputs=False),  # FutureWarning, backward path
    ]


def _shown(action: str, traced: bool):
    """Every warning shown (or raised) over three steps, the first always plain and the other two
    traced or not. The recorder's tables of op names start empty, as in a fresh process: naming a
    function the first time, and starting a trace, once reset every once-per-location registry."""
    import contextlib
    import warnings

    from gradscope._record import _ops

    _ops._NAMES.clear()
    _ops._FCODE.clear()
    raised = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter(action)
        for step in range(3):
            with gradscope.trace() if traced and step else contextlib.nullcontext():
                for call in _warning_calls(torch.randn(3, requires_grad=True)):
                    try:
                        call()
                    except Warning as e:  # the "error" action
                        tb = e.__traceback__
                        while tb.tb_next is not None:
                            tb = tb.tb_next
                        raised.append((type(e).__name__, str(e)[:60], tb.tb_frame.f_code.co_filename))
    return [(m.filename, m.lineno, m.category.__name__, str(m.message)[:60]) for m in w], raised


@pytest.mark.parametrize("action", ["default", "once", "module", "always", "error", "ignore"])
def test_warnings_inside_ops_are_shown_as_often_and_from_where_they_are_plain(action):
    plain = _shown(action, traced=False)
    expected = {"default": 4, "once": 4, "module": 4, "always": 12, "error": 0, "ignore": 0}[action]
    assert len(plain[0]) == expected and len(plain[1]) == (12 if action == "error" else 0), plain  # (the premise)
    assert _shown(action, traced=True) == plain


def test_a_program_prints_each_warning_as_often_as_plain(tmp_path):
    # the real thing: stderr of a training script, plain and traced (a warm-up step before the trace)
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import sys, torch, gradscope
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 8), nn.Dropout2d(0.25), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def step(i):
            x = torch.randn(2, 4, requires_grad=True)
            h = model[0](x)
            h.grad  # a non-leaf's .grad
            loss = model[2](model[1](torch.tensor(h))).sum() + getattr(x, ["sin", "cos", "exp"][i % 3])().sum()
            opt.zero_grad()
            loss.backward()
            opt.step()

        step(0)
        for i in range(1, 5):
            if sys.argv[1] == "traced":
                with gradscope.trace() as tr:
                    step(i)
                tr.why(model[0].weight)  # a query between steps
            else:
                step(i)
        print("done")
    """))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = {}
    for mode in ("plain", "traced"):
        r = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=120,
                           env=env, check=False)
        assert r.returncode == 0, r.stderr[-2000:]
        out[mode] = r.stderr
    assert out["plain"].count("Warning:") == 3, out["plain"]  # (the premise: each of the three once)
    assert out["traced"] == out["plain"]
