"""Tracing changes nothing: results, gradients, grad modes and raised errors are identical
(bitwise) with and without ``gradscope.trace()``.

Every check runs the same program twice from the same seed, once plain and once traced,
and compares everything it produced.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.utils.checkpoint import checkpoint

import gradscope


# --- comparison helpers --------------------------------------------------------------------------
def _bytes(t: torch.Tensor) -> bytes:
    return t.detach().cpu().contiguous().numpy().tobytes()


def assert_same(a, b, path="result"):
    """Bitwise equality of nested results (tensors: dtype, shape, bytes, requires_grad, grad_fn)."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: {a.dtype}{tuple(a.shape)} != {b.dtype}{tuple(b.shape)}"
        assert _bytes(a) == _bytes(b), f"{path}: values differ"
        assert a.requires_grad == b.requires_grad, f"{path}: requires_grad differs"
        assert a.is_leaf == b.is_leaf, f"{path}: is_leaf differs"
        na = type(a.grad_fn).__name__ if a.grad_fn is not None else None
        nb = type(b.grad_fn).__name__ if b.grad_fn is not None else None
        assert na == nb, f"{path}: grad_fn {na} != {nb}"
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), path
    elif isinstance(a, BaseException):
        assert str(a) == str(b), f"{path}: {a!r} != {b!r}"
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert a == b or (a != a and b != b), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def run_both(program, seed=0):
    """Run ``program()`` plain and traced from the same seed; return (plain, traced, trace).
    Each result is (value or None, exception or None, grad mode after, inference mode after)."""
    out = []
    tr = None
    for traced in (False, True):
        torch.manual_seed(seed)
        val = exc = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if traced:
                    with gradscope.trace() as tr:
                        val = program()
                else:
                    val = program()
            except Exception as e:  # noqa: BLE001 - compared below
                exc = e
        out.append((val, exc, torch.is_grad_enabled(), torch.is_inference_mode_enabled()))
        torch.set_grad_enabled(True)
    return out[0], out[1], tr


def assert_transparent(program, seed=0):
    plain, traced, tr = run_both(program, seed)
    pv, pe, pg, pi = plain
    tv, te, tg, ti = traced
    assert type(pe) is type(te), f"plain raised {pe!r}, traced raised {te!r}"
    if pe is not None:
        assert str(pe) == str(te)
    assert_same(pv, tv)
    assert (pg, pi) == (tg, ti), "grad / inference mode after the block differ"
    assert tr.data.meta.get("internal_errors") == [], tr.data.meta.get("internal_errors")
    return tr, plain, traced


# --- deterministic programs ------------------------------------------------------------------------
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(self.drop(h.flatten(1)))


def _train_mlp():
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    losses, grads = [], []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads.append([p.grad.clone() for p in model.parameters()])
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "grads": grads, "params": [p.detach().clone() for p in model.parameters()],
            "out": model(x)}


def _train_cnn():
    model = CNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))
    outs = []
    for _ in range(2):
        opt.zero_grad(set_to_none=True)
        out = model(x)
        F.cross_entropy(out, y).backward()
        opt.step()
        outs.append(out)
    model.eval()
    with torch.no_grad():
        ev = model(x)
    return {"outs": outs, "eval": ev, "grads": [p.grad for p in model.parameters()],
            "running_mean": model.bn.running_mean.clone(), "running_var": model.bn.running_var.clone(),
            "nbt": model.bn.num_batches_tracked.clone()}


def _cuts_and_conversions():
    x = torch.randn(5, requires_grad=True)
    w = torch.randn(5, requires_grad=True)
    h = torch.tanh(x * w)
    s = h.sum().item()
    arr = h.detach().numpy()
    back = torch.from_numpy(arr * 2)
    lst = h.tolist()
    idx = h.argmax()
    r = torch.tensor(lst) * w + back * s + h.round() + h[idx]
    with torch.no_grad():
        q = h * 3
    with torch.inference_mode():
        inf = (x * 2).sum()
    loss = (r + q).sum() + h.long().float().sum()
    loss.backward()
    return [h, s, arr, back, lst, idx, r, q, loss, x.grad, w.grad, float(inf), int(h[0] > 0)]


class _Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


def _custom_fn_checkpoint_hooks():
    x = torch.randn(4, requires_grad=True)
    lin = nn.Linear(4, 4)
    y = _Cube.apply(x)
    z = checkpoint(lambda t: torch.sin(lin(t)), y, use_reentrant=False)
    z.register_hook(lambda g: g * 0.5)
    z.retain_grad()
    loss = z.pow(2).sum()
    (gx,) = torch.autograd.grad(loss, [x], retain_graph=True)
    loss.backward()
    return [y, z, z.grad, gx, x.grad, lin.weight.grad, lin.bias.grad]


def _inplace_and_views():
    x = torch.randn(3, 4, requires_grad=True)
    a = x * 2
    a[0] = 1.0
    a += 1
    v = a[1:]
    v.mul_(3)
    b = torch.relu(a)
    b.clamp_(max=2.0)
    o = torch.empty(3, 4)
    torch.mul(x.detach(), 2, out=o)
    c = (b * o).sum()
    c.backward()
    return [a, v, b, o, c, x.grad, a._version, v._version]


def _grad_mode_left_off():
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    torch.set_grad_enabled(False)  # not restored by the program: must stay off after the trace too
    z = y * 3
    return [y, z]


@pytest.mark.parametrize("program", [
    _train_mlp, _train_cnn, _cuts_and_conversions, _custom_fn_checkpoint_hooks, _inplace_and_views,
    _grad_mode_left_off,
], ids=lambda f: f.__name__.lstrip("_"))
def test_programs_are_bitwise_identical(program):
    tr, plain, traced = assert_transparent(program)
    assert len(tr.events) >= 3  # it did record


def test_grad_mode_left_off_by_the_program_stays_off():
    plain, traced, tr = run_both(_grad_mode_left_off)
    assert plain[2] is False and traced[2] is False  # both leave grad mode off, as the program says


def test_model_trained_under_trace_equals_plain_training_including_state_dict():
    def train():
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, foreach=False)
        sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
        for _ in range(3):
            x = torch.randn(16, 4)
            loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
        return dict(model.state_dict()), opt.state_dict()["state"][0]["exp_avg"]

    assert_transparent(train)


# --- errors are the same errors -----------------------------------------------------------------
def _err_inplace_saved():
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def _err_numpy_requires_grad():
    x = torch.randn(3, requires_grad=True)
    return (x * 2).numpy()


def _err_np_asarray_requires_grad():
    x = torch.randn(3, requires_grad=True)
    return np.asarray(x * 2)


def _err_leaf_inplace():
    x = torch.randn(3, requires_grad=True)
    x.add_(1)


def _err_shape():
    return torch.randn(3, 4) @ torch.randn(5, 2)


def _err_backward_twice():
    x = torch.randn(3, requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward()
    y.backward()


def _err_nonscalar_backward():
    x = torch.randn(3, requires_grad=True)
    (x * 2).backward()


def _err_unused_input_grad():
    x = torch.randn(3, requires_grad=True)
    z = torch.randn(3, requires_grad=True)
    torch.autograd.grad((x * 2).sum(), [x, z])


def _err_out_with_grad():
    x = torch.randn(3, requires_grad=True)
    torch.add(x, 1, out=x)


def _err_no_grad_backward():
    x = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        y = (x * 2).sum()
    y.backward()


def _err_inside_no_grad():
    x = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        raise ValueError("user error inside no_grad")
    return x


def _err_inference_tensor_backward():
    lin = nn.Linear(3, 1)
    with torch.inference_mode():
        x = torch.randn(2, 3)
    h = torch.randn(2, 3, requires_grad=True)
    lin(x * h).sum().backward()
    x.add_(1)


ERRORS = [_err_inplace_saved, _err_numpy_requires_grad, _err_np_asarray_requires_grad, _err_leaf_inplace,
          _err_shape, _err_backward_twice, _err_nonscalar_backward, _err_unused_input_grad, _err_out_with_grad,
          _err_no_grad_backward, _err_inside_no_grad, _err_inference_tensor_backward]


@pytest.mark.parametrize("program", ERRORS, ids=lambda f: f.__name__.lstrip("_"))
def test_errors_are_identical(program):
    tr, plain, traced = assert_transparent(program)
    assert plain[1] is not None, "the program is meant to raise"
    assert tr.data.exception is not None
    assert tr.data.exception.type == type(plain[1]).__name__
    assert tr.data.exception.message == str(plain[1])


def test_warnings_are_still_raised():
    x = torch.randn(3, requires_grad=True)
    for traced in (False, True):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            if traced:
                with gradscope.trace():
                    torch.tensor(x)
            else:
                torch.tensor(x)
        assert [str(m.message) for m in w if "copy construct" in str(m.message)], traced


def _warnings_of(program, traced, action="always"):
    """(file, line, category, first words) of every warning ``program`` raised, with or without a trace."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter(action)
        if traced:
            with gradscope.trace():
                program()
        else:
            program()
    return [(m.filename, m.lineno, m.category.__name__, str(m.message)[:40]) for m in w]


def _copy_construct():
    x = torch.randn(3, requires_grad=True)
    return torch.tensor(x)  # a warning from C++, attributed to this line


def _implicit_softmax_dim():
    x = torch.randn(2, 3, requires_grad=True)
    return F.softmax(x)  # warnings.warn(stacklevel=3) inside a Python-level torch function


class _Warns(nn.Module):
    def forward(self, x):
        return torch.tensor(x) * 2  # inside a module's forward


def _in_module():
    return _Warns()(torch.randn(3, requires_grad=True))


def _twice():
    x = torch.randn(3, requires_grad=True)
    for _ in range(2):
        torch.tensor(x)  # one line, reached twice: "default" shows it once


@pytest.mark.parametrize("program", [_copy_construct, _implicit_softmax_dim, _in_module])
def test_warnings_point_at_the_same_line_as_without_the_trace(program):
    plain = _warnings_of(program, traced=False)
    assert plain and all(f == __file__ for f, *_ in plain), plain  # (the premise: attributed to this file)
    assert _warnings_of(program, traced=True) == plain


def _shape_mismatch():
    return torch.randn(2, 3) @ torch.randn(4, 5)  # raises from C++


def test_a_raising_op_traceback_ends_at_the_same_line_as_without_the_trace():
    import traceback

    last = {}
    for traced in (False, True):
        with pytest.raises(RuntimeError) as info:
            if traced:
                with gradscope.trace():
                    _shape_mismatch()
            else:
                _shape_mismatch()
        fr = traceback.extract_tb(info.value.__traceback__)[-1]
        last[traced] = (fr.filename, fr.lineno, fr.name, fr.line)
    assert last[True] == last[False]
    assert last[False][0] == __file__


def test_once_per_location_warnings_are_shown_as_often_as_without_the_trace():
    # "default" shows a warning once per (module, line), remembered in the caller module's globals
    globals().pop("__warningregistry__", None)
    plain = _warnings_of(_twice, traced=False, action="default")
    globals().pop("__warningregistry__", None)
    traced = _warnings_of(_twice, traced=True, action="default")
    assert len(plain) == 1 and traced == plain


def test_a_filter_by_module_turns_the_warning_into_the_same_error():
    for traced in (False, True):
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message="To copy construct", module=__name__)
            with pytest.raises(UserWarning, match="To copy construct"):
                if traced:
                    with gradscope.trace():
                        _copy_construct()
                else:
                    _copy_construct()


# --- hypothesis: random small programs -----------------------------------------------------------
OPS = ["add", "mul", "tanh", "relu", "matmul", "detach", "sum", "exp", "sigmoid", "inplace_add_fresh",
       "no_grad", "item_mul", "index"]

recipe_strategy = st.lists(
    st.tuples(st.sampled_from(OPS), st.integers(0, 63), st.integers(0, 63)), min_size=1, max_size=12)


def build_program(recipe):
    """A program from a recipe: each step applies an op to tensors picked from a pool."""

    def program():
        x = torch.randn(4, 4, requires_grad=True)
        w = torch.randn(4, 4, requires_grad=True)
        c = torch.randn(4, 4)
        pool = [x, w, c]
        scalars = []
        for op, i, j in recipe:
            a = pool[i % len(pool)]
            b = pool[j % len(pool)]
            if op == "add":
                r = a + b
            elif op == "mul":
                r = a * b
            elif op == "tanh":
                r = torch.tanh(a)
            elif op == "relu":
                r = F.relu(a)
            elif op == "matmul":
                r = a @ b if a.dim() == 2 and b.dim() == 2 else a * b
            elif op == "detach":
                r = a.detach()
            elif op == "sum":
                r = a.sum()
            elif op == "exp":
                r = a.exp()
            elif op == "sigmoid":
                r = a.sigmoid()
            elif op == "inplace_add_fresh":
                r = a * 1.0
                r.add_(b if b.shape == r.shape or b.dim() == 0 else 1.0)
            elif op == "no_grad":
                with torch.no_grad():
                    r = a * 2 + 1
            elif op == "item_mul":
                s = a.sum().item()
                scalars.append(s)
                r = b * s
            elif op == "index":
                r = a[[2, 0, 3, 1]] if a.dim() == 2 else a[None]
            else:  # pragma: no cover
                raise AssertionError(op)
            pool.append(r)
        loss = None
        for t in pool[3:]:
            if t.requires_grad:
                loss = t.sum() if loss is None else loss + t.sum()
        if loss is not None:
            loss.backward()
        return {"pool": pool, "scalars": scalars, "x.grad": x.grad, "w.grad": w.grad,
                "grad_on": torch.is_grad_enabled()}

    return program


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(recipe=recipe_strategy, seed=st.integers(0, 2**16))
def test_random_programs_are_bitwise_identical(recipe, seed):
    tr, plain, traced = assert_transparent(build_program(recipe), seed=seed)
    n_steps = len(recipe)
    # the trace saw at least one event per recipe step (each step makes a torch call)
    assert len([e for e in tr.events if e.context == "user"]) >= n_steps
    if plain[0]["x.grad"] is not None or plain[0]["w.grad"] is not None:
        assert len(tr.data.backwards) == 1


def test_random_program_harness_can_fail():
    """The comparison is not vacuous: a program that differs between runs is caught."""
    calls = []

    def flaky():
        calls.append(1)
        return torch.full((2,), float(len(calls)))

    with pytest.raises(AssertionError, match="values differ"):
        assert_transparent(flaky)
