"""The recording layer: the only code that touches torch modes and hooks.

A private TorchFunctionMode sees every user-level torch call; global module,
optimizer and registration hooks name parameters and see optimizer steps; autograd
node hooks (installed for the duration of each backward call) see which nodes ran and
what gradient each sent. Nothing here keeps a user's tensor alive: tensors are
identified by trace-local ids through weak references (module parameters and buffers:
held while recording, then found through their module, see ``_Held``; a weak reference
blocks torch.utils.swap_tensors).

Transparent to PyTorch itself: property reads and private writes PyTorch performs pass
straight through (``_SKIP``); graph nodes are mapped to events by sequence number, never
given a Python object while recording (``_seq``); own arithmetic runs with every mode set
aside (``_Own``); hooks keep detached aliases of gradients (``_held``); nothing is recorded
under torch.jit.trace; once steps=/max_events= is reached the recorder leaves the mode
stack and its hooks (``_limit_reached``).

Cost matters here (benchmarks/overhead.py): the hot paths record compact data (packed
ints, interned code-id sites) and the rest is built on the first query (``sync``).
- A module call is walked once (its pre hook); ops inside it walk only up to its frame.
- ``optimizer.step()`` runs with the recorder off the mode stack; its parameter writes
  are one event from version counters. ``zero_grad()``'s ``p.grad = None`` calls are one
  event (bracketed by its profiler marker).
- Backward: each graph edge is observed from one end (see ``_backward_pre``), so roughly
  half the nodes of a chain get a hook; edge norms are computed only when a leaf ends zero
  or non-finite; big gradients are kept only within a small budget (``_HOLD_BYTES``).
"""
from __future__ import annotations

import collections
import linecache as _linecache
import math
import re
import sys
import threading
import weakref
from functools import partial

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode, resolve_name

from . import _frames, _names
from .naming import infer_names
from ._frames import (
    F_APPLY, F_BACKWARD, F_CHECKPOINT, F_CLIP, F_COMPILE, F_DATA, F_FUNCTORCH, F_GENERATED, F_INIT, F_OPTIM, F_SETUP,
    F_TORCH,
)
from .model import (
    BackwardNode, BackwardRecord, Event, ExceptionInfo, GradInfo, TensorInfo, TensorRef, TraceData, strip_torch_prefix,
)

_T = torch.Tensor
_NO_TF = torch._C.DisableTorchFunction
_is_compiling = torch.compiler.is_compiling
_jit_tracing = torch._C._get_tracing_state
_seq = torch._C._autograd._get_sequence_nr  # the sequence number the next graph node gets (per thread)

# --- what the mode skips or classifies --------------------------------------------------------
_PROPS = {"shape", "dtype", "device", "grad", "requires_grad", "is_sparse", "grad_fn", "is_leaf", "_version", "_base",
          "layout", "ndim", "is_cuda", "is_nested", "is_quantized", "is_meta", "output_nr", "retains_grad", "is_cpu",
          "itemsize", "nbytes", "is_mps", "is_xpu", "is_mkldnn", "is_sparse_csr", "names", "_backward_hooks",
          "_post_accumulate_grad_hooks"}
_TENSOR_PROPS = {"H", "T", "mH", "mT", "real", "imag", "data"}  # reads that make a tensor: recorded
_SKIP = frozenset([getattr(_T, n).__get__ for n in _PROPS if hasattr(_T, n)] + [
    getattr(_T, n) for n in ("dim", "size", "numel", "stride", "data_ptr", "storage_offset", "is_contiguous",
                             "is_floating_point", "is_complex", "_is_view", "element_size", "nelement", "get_device",
                             "untyped_storage", "__len__", "__repr__", "__format__", "__hash__", "__reduce_ex__",
                             "__deepcopy__", "is_inference", "__contains__", "has_names", "is_shared", "is_pinned")
    if hasattr(_T, n)] + [
    # Every other attribute read that yields no tensor, and every write of a private one
    # (`t._backward_hooks = None`): PyTorch performs these itself, some while holding a tensor's
    # autograd lock (rebasing a view marked dirty), and reading is_leaf there would deadlock.
    d.__get__ if m == "get" else d.__set__
    for n, d in vars(torch._C.TensorBase).items() if type(d).__name__ == "getset_descriptor"
    for m in ("get", "set")
    if (m == "get" and n not in _TENSOR_PROPS) or (m == "set" and n.startswith("_"))] + [
    # load_state_dict's step before torch.utils.swap_tensors: its result is swapped at once, and
    # swap_tensors refuses a tensor with a weak reference (ours, had it been recorded)
    getattr(_T, n) for n in ("module_load",) if hasattr(_T, n)])

_SET_GRAD = torch._C._set_grad_enabled
_DETACH = {_T.detach: "detach", _T.detach_: "detach", _T.data.__get__: "data"}
_CONVERT = {
    _T.numpy: "numpy", _T.__array__: "numpy", _T.item: "item", _T.tolist: "tolist",
    _T.__float__: "item", _T.__int__: "item", _T.__bool__: "item", _T.__index__: "item", _T.__complex__: "item",
}
_REWRAP = {torch.tensor, torch.as_tensor, _T.new_tensor, torch.asarray}
_BACKWARD = {_T.backward: "Tensor.backward", torch.autograd.backward: "torch.autograd.backward",
             torch.autograd.grad: "torch.autograd.grad"}
_REQ = {_T.requires_grad_, _T.requires_grad.__set__}
_ZERO_GRAD_OPS = {torch.bernoulli, _T.bernoulli, torch.poisson, torch.heaviside, _T.heaviside,
                  torch.round, _T.round, torch.sign, _T.sign, torch.floor, _T.floor, torch.ceil, _T.ceil,
                  torch.trunc, _T.trunc, torch.fix, _T.fix, _T.__floordiv__, torch.floor_divide, _T.round_,
                  torch.sgn, _T.sgn, _T.__rfloordiv__, torch.normal, torch.binomial}
_CAST_NAMES = {"to", "long", "int", "short", "char", "byte", "bool", "type", "type_as", "view", "int_repr"}
# they read only the shape/dtype/device of their input, never its values: not a cut of anything
_SHAPE_ONLY = {torch.ones_like, torch.zeros_like, torch.empty_like, torch.full_like, torch.rand_like,
               torch.randn_like, torch.randint_like, _T.new_zeros, _T.new_ones, _T.new_empty, _T.new_full,
               _T.size, _T.dim, _T.numel}
_HOOK_REG = {_T.register_hook}
_POST_ACC_HOOK = getattr(_T, "register_post_accumulate_grad_hook", None)
if _POST_ACC_HOOK is not None:
    _HOOK_REG.add(_POST_ACC_HOOK)
_RETAIN = {_T.retain_grad}
_GRAD_SET = _T.grad.__set__
_GRAD_GET = _T.grad.__get__
# Of those, the calls that can raise a warning: PyTorch's Python-level ones (warnings.warn with a
# stacklevel, e.g. __len__ under torch.jit.trace) and the getters that warn in C++ (a non-leaf's .grad,
# .volatile). They leave _SKIP and pass through from the caller's line (_C_PASS, _C_GRAD_GET: see
# _caller), so their warnings have their plain location and registry; the other reads stay one C call.
_WARNS = frozenset([f for f in _SKIP if hasattr(f, "__code__")]
                   + [getattr(_T, n).__get__ for n in ("grad", "volatile") if hasattr(_T, n)])
_SKIP = _SKIP - _WARNS
_DATA_SET = _T.data.__set__
_SETITEM = _T.__setitem__
_SPECIAL = {**{f: "detach" for f in _DETACH}, **{f: "convert" for f in _CONVERT},
            **{f: "rewrap" for f in _REWRAP}, **{f: "requires_grad" for f in _REQ}, _GRAD_SET: "grad_set",
            **{f: "hook" for f in _HOOK_REG}, **{f: "retain" for f in _RETAIN}}
_NOT_INPLACE = {"requires_grad_", "retain_grad", "share_memory_", "record_stream", "register_hook", "__setstate__",
                "detach_", "set_", "pin_memory", "uniform_", "normal_"}

_NAMES: dict = {}
# A raw tensor ref is one int (ints are not tracked by the garbage collector; tuples of them get
# untracked): bit 0 is_leaf, bit 1 requires_grad, bits 2-33 tid, the rest version + 1.
def _pk(tid, rg, leaf, ver=0):
    return ((ver + 1) << 34) | (tid << 2) | (2 if rg else 0) | (1 if leaf else 0)


def _tid_of(x):
    return (x >> 2) & 0xFFFFFFFF


def _ver(x):
    return (x >> 34) - 1
_CTX_FLAGS = (F_APPLY | F_BACKWARD | F_CHECKPOINT | F_CLIP | F_COMPILE | F_DATA | F_FUNCTORCH | F_GENERATED | F_INIT
              | F_OPTIM | F_SETUP)
_INF = float("inf")
PRESENT = -1.0  # an edge norm that was not measured: a gradient was sent (non-zero as far as we know)
_FREED = "gradscope_freed"  # node.metadata key: a backward ran through this node and freed its graph
_NO_DETAIL: dict = {}
_CLASS_DETAIL: dict = {}  # module class name -> its (shared) module-event detail  # shared by events without details: never mutate
_DTYPES: dict = {}
_P = nn.Parameter


def _name(func) -> str:
    n = _NAMES.get(func)
    if n is None:
        try:
            n = _resolve_name(func)
        except Exception:
            n = None
        if n is None:
            mod = getattr(func, "__module__", None) or ""
            n = f"{mod}.{getattr(func, '__qualname__', getattr(func, '__name__', repr(func)))}".lstrip(".")
        n = n.replace("torch._C.TensorBase.", "torch.Tensor.").replace("torch._tensor.Tensor.", "torch.Tensor.")
        if n.startswith("torch.Tensor.") and n.endswith(".__get__"):
            n = n[: -len(".__get__")]
        _NAMES[func] = n
    return n


_short = strip_torch_prefix


_INPLACE_CACHE: dict = {}


def _is_inplace_method(func) -> bool:
    r = _INPLACE_CACHE.get(func)
    if r is None:
        n = _short(_name(func))
        base = n.rsplit(".", 1)[-1]
        r = (base.endswith("_") and not base.endswith("__") and base not in _NOT_INPLACE
             and not n.startswith("nn.init"))
        _INPLACE_CACHE[func] = r
    return r


def _tensors(obj, out, depth=0):
    """Collect tensors from args (lists/tuples/dicts, two levels deep)."""
    t = type(obj)
    if isinstance(obj, _T):
        out.append(obj)
    elif depth < 2 and (t is list or t is tuple or isinstance(obj, (list, tuple))):
        # (tuple subclasses included: torch.return_types of max/topk/sort, named tuples)
        for x in obj:
            if isinstance(x, _T):
                out.append(x)
            elif depth < 1 and isinstance(x, (list, tuple)):
                _tensors(x, out, depth + 1)
    elif depth < 1 and isinstance(obj, dict):  # (dict subclasses too: model outputs like OrderedDicts)
        for x in obj.values():
            if isinstance(x, _T):
                out.append(x)
    return out


def _is_leaf(t) -> bool:
    """``t.is_leaf``; True for a view made under no_grad whose base was then written in place (reading
    is_leaf or grad_fn of such a view raises; it has no history of its own)."""
    try:
        return t.is_leaf
    except RuntimeError:
        return True


def _floats(obj, out, budget=4096):
    """Python floats inside nested lists (for value lineage)."""
    stack = [obj]
    while stack and len(out) < budget:
        x = stack.pop()
        tx = type(x)
        if tx is float:
            out.append(x)
        elif tx is list or tx is tuple:
            stack.extend(x)
    return out


_dispatch_len = torch._C._len_torch_dispatch_stack


class _Own:
    """``with _Own():`` our own tensor arithmetic (gradient norms, reading values) is invisible to
    every mode: torch-function modes (an enclosing trace, a user's) and dispatch modes (a user's
    logger, FlopCounterMode, DebugMode), which are taken off their stack for its duration."""

    __slots__ = ("_dm", "_tf")

    def __enter__(self):
        self._tf = _NO_TF()
        self._tf.__enter__()
        self._dm = None
        if _dispatch_len():
            from torch.utils._python_dispatch import _disable_current_modes

            self._dm = _disable_current_modes()
            try:
                self._dm.__enter__()
            except BaseException:
                self._dm = None
                self._tf.__exit__(None, None, None)
                raise
        return self

    def __exit__(self, *exc):
        try:
            if self._dm is not None:
                self._dm.__exit__(*exc)
        finally:
            self._tf.__exit__(*exc)
        return False


def _grad_status(g):
    if g is None:
        return "none", None
    try:
        with _Own():  # our own arithmetic: invisible to an enclosing trace or user mode
            if g.is_sparse:
                g = g.coalesce().values()
            n = float(torch.linalg.vector_norm(g.detach().float()))
    except Exception:
        return "received", None
    if not math.isfinite(n):
        return "nonfinite", n
    if n == 0.0:
        return "zero", 0.0
    return "received", n


def _grad_statuses(grads):
    """_grad_status for many gradients with one foreach norm (dense float ones)."""
    out = [None] * len(grads)
    dense, gs = [], []
    dt, mixed = None, False
    for i, g in enumerate(grads):
        if g is not None and not g.is_sparse and g.is_floating_point():
            dense.append(i)
            gs.append(g)
            if dt is None:
                dt = g.dtype
            elif g.dtype != dt:
                mixed = True
    if len(gs) > 1:
        try:
            with _Own():  # our own arithmetic: invisible to an enclosing trace or user mode
                prev = torch.is_grad_enabled()
                torch._C._set_grad_enabled(False)  # (cheaper than detaching each gradient)
                try:
                    norms = torch._foreach_norm(gs)
                finally:
                    torch._C._set_grad_enabled(prev)
                if mixed:
                    norms = [v.float() for v in norms]
                vals = torch.stack(norms).tolist()
            for i, n in zip(dense, vals):
                # (a NaN norm fails both comparisons)
                out[i] = ("received", n) if 0.0 < n < _INF else ("zero", 0.0) if n == 0.0 else ("nonfinite", n)
            if len(dense) == len(out):
                return out
        except Exception:
            pass
    return [o if o is not None else _grad_status(g) for o, g in zip(out, grads)]


# --- calling a traced function "from the user's line" ------------------------------------------
# A warning raised inside a torch function (from C++, or warnings.warn(stacklevel=2) in a Python
# one) is attributed to the Python frame that called it. Under the mode that frame would be
# Recorder._record, and warning filters by module or line, and once-per-location deduplication,
# would behave differently than without the trace. So the recorder calls ``func`` through a
# one-line trampoline whose code object carries the caller's file name, line and function name
# and which runs in the caller's module globals (its __name__ and __warningregistry__).
_TRAMP_CODE = next(c for c in compile("def _call(func, args, kwargs): return func(*args, **kwargs)",
                                      "<gradscope>", "exec").co_consts if isinstance(c, type(_tensors.__code__)))
if sys.version_info >= (3, 11):  # no column ranges: a traceback through it shows the user's line without carets
    try:
        _n, _table = len(_TRAMP_CODE.co_code) // 2, bytearray()
        while _n > 0:  # location entries "no columns, same line" (CPython's Objects/locations.md), 8 units each
            _table += bytes([0x80 | (13 << 3) | (min(_n, 8) - 1), 0])
            _n -= 8
        _TRAMP_CODE = _TRAMP_CODE.replace(co_linetable=bytes(_table))
    except Exception:
        pass
_HTF_CODE = torch.overrides.handle_torch_function.__code__
_TRAMPS: dict = {}  # (id(code), lineno) -> (code, trampoline)


def _direct(func, args, kwargs):
    return func(*args, **kwargs)


def _caller(f):
    """The trampoline for a torch function called from frame ``f`` (see above)."""
    co = f.f_code
    if co is _HTF_CODE:  # a Python-level torch function (F.softmax): plain, its caller sees its warnings
        f = f.f_back
        f = f.f_back if f is not None else None
        if f is None:
            return _direct
        co = f.f_code
    key = (id(co), f.f_lineno)
    e = _TRAMPS.get(key)
    if e is not None and e[0] is co:
        return e[1]
    try:
        names = {"co_name": co.co_name}
        if hasattr(co, "co_qualname"):  # Python 3.11+
            names["co_qualname"] = co.co_qualname
        code = _TRAMP_CODE.replace(co_filename=co.co_filename, co_firstlineno=max(int(f.f_lineno or 1), 1), **names)
        fn = type(_direct)(code, f.f_globals)
    except Exception:
        return _direct
    _frames.mark_internal(code)  # never a site of its own
    if len(_TRAMPS) > 50_000:
        _TRAMPS.clear()
    _TRAMPS[key] = (co, fn)  # (keeps the code object, so its id is not reused)
    return fn


# --- warning filters set without resetting the once-per-location registries --------------------
# Every change made through the warnings API (filterwarnings, simplefilter, catch_warnings on enter
# and on exit) bumps the filters' version; the next warning anywhere then finds its module's
# __warningregistry__ stale and clears it, so a warning already shown at a location is shown again
# ("default"/"module" actions). Plain Python makes no such change, so tracing may not either. An
# "ignore" filter never writes a registry (only a shown warning is remembered), so inserting and
# removing one in place, with no bump, is invisible.
class _Quiet:
    """``with _Quiet():`` gradscope's own code runs with every warning ignored, registries untouched."""

    __slots__ = ("_filters", "_item")

    def __enter__(self):
        import warnings

        self._filters, self._item = warnings.filters, ("ignore", None, Warning, None, 0)
        self._filters.insert(0, self._item)
        return self

    def __exit__(self, *exc):
        _drop_filter(self._filters, self._item)
        return False


def _drop_filter(filters, item):
    for i, f in enumerate(filters):
        if f is item:  # (by identity: a user's simplefilter("ignore") is an equal tuple)
            del filters[i]
            return


def _prime_overrides():
    """torch.overrides.resolve_name (how ops are named) wraps its work in catch_warnings: a registry
    reset per call. Its tables are built here once, with the version bump set aside (the name of
    the bump differs by Python version: 3.13 added the lock); later calls go round the wrapper."""
    import warnings

    saved = {n: getattr(warnings, n) for n in ("_filters_mutated", "_filters_mutated_lock_held")
             if callable(getattr(warnings, n, None))}
    try:
        for n in saved:
            setattr(warnings, n, _no_bump)
        with _Quiet():
            resolve_name(torch.add)
    except Exception:
        pass
    finally:
        for n, f in saved.items():
            setattr(warnings, n, f)


def _no_bump():
    pass


_prime_overrides()
_resolve_name = getattr(resolve_name, "__wrapped__", resolve_name)  # (a lookup in the table built above)


# --- per-thread active recorders, shared global hooks -------------------------------------------
_local = threading.local()
_global_lock = threading.Lock()
_global_users = 0
_global_handles: list = []


_COMPILE_HOOK_WARNING = r"Using `torch.compile\(module\)` when there are global hooks"


class _WarningFilter:
    """Removes the warnings filter installed with the global hooks (a 'handle' like the others)."""

    def remove(self):
        import warnings

        # (in place and without a version bump, as it was added: see _Quiet)
        warnings.filters[:] = [f for f in warnings.filters
                               if not (f[0] == "ignore" and getattr(f[1], "pattern", None) == _COMPILE_HOOK_WARNING)]


def _active():
    return getattr(_local, "stack", ())


def _install_globals():
    global _global_users
    with _global_lock:
        _global_users += 1
        if _global_users > 1:
            return
        from torch.nn.modules import module as M
        from torch.optim import optimizer as O

        import warnings

        # our global hooks make torch.compile(module) warn; tracing must not change what the user sees.
        # Inserted as filterwarnings would, but without its version bump (that would make every warning
        # already shown once per location show again: see _Quiet)
        warnings.filters.insert(0, ("ignore", re.compile(_COMPILE_HOOK_WARNING, re.I), Warning, None, 0))
        _global_handles.append(_WarningFilter())

        _global_handles.extend([
            M.register_module_forward_pre_hook(_on_module_pre),
            # (not always_call: the registry of always-called hooks stays the user's; a call whose forward
            # raised leaves its entry on our module stack, dropped when seen stale: Recorder._drop_stale)
            M.register_module_forward_hook(_on_module_post),
            M.register_module_module_registration_hook(_on_module_registered),
            M.register_module_parameter_registration_hook(_on_param_registered),
            O.register_optimizer_step_pre_hook(_on_optimizer_step),
            O.register_optimizer_step_post_hook(_on_optimizer_step_done),
        ])


def _remove_globals():
    global _global_users
    with _global_lock:
        _global_users -= 1
        if _global_users > 0:
            return
        while _global_handles:
            _global_handles.pop().remove()


def _dispatch(method: str, nargs: int, with_frame: bool = False, leave: bool = False):
    """A global hook that forwards to every recorder active in this thread (returns None, as
    registration hooks must). ``with_frame``: also pass the caller's frame (for module hooks, the
    frame of Module._call_impl that runs the call's hooks and forward). ``leave``: a recorder whose
    recording ended (steps=/max_events=) leaves the mode stack and the global hooks here (module
    pre hooks run from a copy of the hook registry: removing ours there is safe)."""

    def hook(*args):
        # (Dynamo inlines global hooks: keep them out of the compiled graph. Under torch.jit.trace nothing
        # is recorded, see Recorder._jit_traced: a hook reading a module's output there (t.shape in _tid)
        # is traced too, and the tracer names that value after our local `t`, so check_trace's graph differs)
        if _is_compiling() or _jit_tracing() is not None:
            return None
        call = args[:nargs] + (sys._getframe(1),) if with_frame else args[:nargs]
        for r in getattr(_local, "stack", ()):
            if r._on:
                try:  # (Recorder._guard, written out: module hooks run twice per module call)
                    with _NO_TF():
                        getattr(r, method)(*call)
                except Exception as e:
                    r._internal(e)
            elif leave and r._leave_pending:
                r._leave()
        return None

    hook.__name__ = f"gradscope{method}"
    return hook


_on_module_pre = _dispatch("_module_pre", 1, with_frame=True, leave=True)  # (module, args)
_on_module_post = _dispatch("_module_post", 3, with_frame=True)  # (module, args, output)
_CALL_IMPL = nn.Module._call_impl.__code__
_on_module_registered = _dispatch("_module_registered", 3)  # (module, name, submodule)
_on_param_registered = _dispatch("_param_registered", 3)  # (module, name, param)
_record_optimizer_step = _dispatch("_optimizer_step", 1)  # (optimizer, args, kwargs)
_stack_len = torch._C._len_torch_function_stack
_stack_at = torch._C._get_function_stack_at


def _on_optimizer_step(optimizer, args, kwargs):
    """Record the step's start, then take this thread's recorders off the mode stack for the
    step's duration: its internals (dozens of calls per parameter) are summarised from version
    counters when it ends, so they need not pass through any mode. A recorder that is not on
    top of the stack (a user's mode above it) stays and uses the ``_in_opt`` fast path.

    A step given a closure (LBFGS; PyTorch Lightning's automatic optimization runs the whole
    training step as one) runs user code inside it: the closure is wrapped so that it runs
    recorded, and the step's record starts when the closure returns (when the gradients exist)."""
    closure = kwargs.get("closure") if "closure" in kwargs else (args[1] if len(args) > 1 else None)
    if _is_compiling():
        _record_optimizer_step(optimizer, args, kwargs)
        return None
    if callable(closure) and _active():
        for r in _active():
            r._opt_closure = True
        _suspend_for_step()
        wrapped = partial(_run_closure, optimizer, closure)
        if "closure" in kwargs:
            return args, {**kwargs, "closure": wrapped}
        return (args[0], wrapped, *args[2:]), kwargs
    _record_optimizer_step(optimizer, args, kwargs)
    _suspend_for_step()
    return None


def _suspend_for_step():
    active = _active()
    for r in active:  # a recording that ended: off the mode stack for good (its hooks go at the next module call:
        if r._leave_pending:  # the optimizer runs its hooks from the live registry, which must not change now)
            r._off_stack()
    while True:
        n = _stack_len()
        top = _stack_at(n - 1) if n else None
        if top is None or top not in active or not (top._in_opt or top._opt_closure) or top._suspended:
            break
        torch._C._pop_torch_function_stack()
        top._suspended = True


def _run_closure(optimizer, closure, *a, **k):
    """The user's closure, recorded; then the step's record begins (its updates follow)."""
    for r in _active():
        if r._opt_pending is not None:  # a closure called again (LBFGS): the updates so far
            r._guard(r._optimizer_step_done, optimizer)
        r._resume()
        r._in_opt = r._opt_closure = False
    try:
        return closure(*a, **k)
    finally:
        _record_optimizer_step(optimizer, (optimizer,), {})
        _suspend_for_step()


def _on_optimizer_step_done(optimizer, args, kwargs):
    if _is_compiling():  # Dynamo inlines global hooks: keep them out of the compiled graph
        return
    for r in _active():  # outermost first: suspended recorders go back in their order
        r._resume()
        r._in_opt = r._opt_closure = False
        if r._on:
            r._guard(r._optimizer_step_done, optimizer)


# What the mode does with each function, decided once per function (_classify).
_C_OP, _C_INPLACE, _C_IGNORE, _C_GRAD_SET, _C_SET_GRAD, _C_BACKWARD, _C_GRAD_GET, _C_PASS = range(8)
_FCODE: dict = {}


def _classify(func) -> int:
    if "_record_function" in _name(func):
        c = _C_IGNORE  # profiler markers: not worth recording
    elif func == _GRAD_SET:
        c = _C_GRAD_SET
    elif func == _GRAD_GET:
        c = _C_GRAD_GET
    elif func in _WARNS:
        c = _C_PASS
    elif func is _SET_GRAD:
        c = _C_SET_GRAD
    elif func in _BACKWARD:
        c = _C_BACKWARD
    elif func == _SETITEM or func == _DATA_SET or _is_inplace_method(func):
        c = _C_INPLACE
    else:
        c = _C_OP
    try:
        _FCODE[func] = c
    except TypeError:  # unhashable callables are classified every time
        pass
    return c


_RF_ENTER = torch.ops.profiler._record_function_enter_new
_RF_EXIT = torch.ops.profiler._record_function_exit._RecordFunction
_ZERO_GRAD_DETAIL = {"value": None, "zero_grad": True}  # shared, read-only


class _Ref(weakref.ref):
    """A weak reference that also carries the tensor's trace-local id (one object, not two)."""

    __slots__ = ("tid",)


class _ModulePaths:
    """module -> its path in the model, keyed by id() with a weak reference to check identity (a
    WeakKeyDictionary lookup builds a new weak reference on every call: this is on the hot path)."""

    __slots__ = ("_d",)

    def __init__(self):
        self._d: dict = {}

    def get(self, m, default=None):
        e = self._d.get(id(m))
        return e[1] if e is not None and e[0]() is m else default

    def __contains__(self, m):
        e = self._d.get(id(m))
        return e is not None and e[0]() is m

    def __setitem__(self, m, path):
        self._d[id(m)] = (weakref.ref(m), path)

    def items(self):
        return [(m, p) for m, p in ((r(), p) for r, p in self._d.values()) if m is not None]


class _Held:
    """A strong reference in the shape of a _Ref (called, it returns the object), for parameters and
    buffers while recording: a weak reference makes torch.utils.swap_tensors refuse a tensor
    (load_state_dict, module.to() under torch.__future__.set_swap_module_params_on_conversion(True)).
    Modules hold these anyway; released when the recording stops (Recorder._release_params)."""

    __slots__ = ("t", "tid")

    def __init__(self, t):
        self.t = t

    def __call__(self):
        return self.t


class _Slot:
    """After the recording: a module's parameter, buffer or parameter .grad found through its module
    (weakly referenced) and name, with no reference of any kind on the tensor itself."""

    __slots__ = ("grad", "key", "kind", "m", "name", "tid", "mark")

    def __init__(self, m_ref, kind, name, grad, key, mark=None):
        self.m, self.kind, self.name, self.grad, self.key = m_ref, kind, name, grad, key
        self.mark = mark  # (data_ptr, shape) when the recording stopped: see matches()

    def matches(self, t) -> bool:
        """Whether ``t`` is this tensor, also once its module is gone (a function returned only the
        parameter): the same id, memory and shape as when the recording stopped (no reference needed)."""
        if id(t) != self.key or self.mark is None:
            return False
        try:
            return (t.data_ptr(), tuple(t.shape)) == self.mark
        except Exception:
            return False

    def __call__(self):
        m = self.m()
        if m is None:
            return None
        t = (m._parameters if self.kind == "p" else m._buffers).get(self.name)
        if t is not None and self.grad:
            t = t.grad
        return t if t is not None and id(t) == self.key else None


class _GradRef:
    """A leaf's .grad, found through its leaf (no reference on the gradient itself: torch.utils.swap_tensors
    swaps parameters' gradients too, and holding them would keep them past zero_grad)."""

    __slots__ = ("gone", "key", "leaf", "refs", "tid")

    def __init__(self, refs, leaf, key):
        self.refs, self.leaf, self.key, self.gone = refs, leaf, key, False

    def __call__(self):
        r = self.refs.get(self.leaf)
        t = r() if r is not None and not self.gone else None
        if t is None:
            return None
        with _NO_TF():
            g = t.grad
        return g if g is not None and id(g) == self.key else None


class _Root:
    """A model called in the trace: its user's variable (None when none is visible), whether its own
    names are bare indices, and its class."""

    __slots__ = ("ref", "var", "flat", "cls", "leaf")

    def __init__(self, ref, var, flat, cls, leaf):
        self.ref, self.var, self.flat, self.cls, self.leaf = ref, var, flat, cls, leaf


class _DeadRef:
    __slots__ = ("tid",)

    def __call__(self):
        return None


class Recorder(TorchFunctionMode):
    """Private mode behind :func:`gradscope.trace`. Use the facade, not this."""

    def __init__(self, *, max_events: int | None = None, steps: int | None = None, eager_compile: bool = False):
        super().__init__()
        self._eager_compile = eager_compile
        self._stance = None
        # flags the ops inside a module call inherit from the call's own walk (see _module_pre)
        self._inherit = ~(F_TORCH | F_COMPILE) if eager_compile else ~F_TORCH
        self.data = TraceData()
        self.events = self.data.events
        self.tensors = self.data.tensors
        self._ids: dict = {}  # id(tensor) -> _Ref (a weak reference carrying the tid)
        self._refs: dict = {}  # tid -> weakref
        self._shapes: dict = {}  # interned shape tuples
        self._raws: dict = {}  # interned call stacks
        self._next_tid = 0
        self._synced = 0
        self._synced_tensors = -1
        self._on = False
        self._entry = None
        self._max_events = max_events
        self._steps = steps
        self._n_backward = 0
        self._slots = None  # after the recording: id -> where a module's tensor is (see _release_params)
        self._probes = _PROBES  # in-place checks left in the current graph (see _saved_info)
        self._node_ev: dict = {}  # graph node sequence number -> index of the event that made it
        self._s0 = 0  # the autograd sequence number before the recorded call
        self._prehooked: set = set()  # sequence numbers of nodes whose output a tensor hook rewrites
        self._mod_stack: list = []
        self._mod_path = _ModulePaths()
        self._roots: list = []  # _Root of each model called (kept when gone: its tensors keep their names)
        self._names_dirty = True
        self._param_names: dict = {}  # id(param or buffer) -> (weakref, name)
        self._param_src: dict = {}  # id(param or buffer) -> (weakref, _Root, path in it)
        self._tid_src: dict = {}  # tid -> (_Root, path): module tensors the trace saw
        self._prefix: dict = {}  # _Root -> prefix of its names
        self._tied_names: dict = {}  # id(param) -> its other names (tied weights)
        self._param_owner: dict = {}  # id(param) -> (weakref(param), class name, attr, raw site)
        # module_set events made before the model's root was seen: (weakref(module), attr name, event
        # index, {old param tid: name within the old module}); their paths are filled in at stop
        self._late_attrs: list = []
        self._hooked: set = set()  # id() of tensors whose hook registration was recorded
        self._consumers: dict = {}  # tid -> list of output tids (grad-recording ops that used it)
        self._values: dict = {}  # escaped python float -> event index
        self._arrays: list = []  # (ptr, nbytes, shape, event index)
        self._trainable: set = set()
        self._errors: list = []
        self._error_event = None
        self._in_opt = False
        self._suspended = False  # taken off the mode stack during optimizer.step()
        self._opt_closure = False  # inside optimizer.step(closure), before the closure ran
        self._leave_pending = False  # recording ended (steps=/max_events=): leave at the next chance
        self._left_stack = False  # off the mode stack for good
        self._left_hooks = False  # out of the global hooks
        self._opt_pending = None
        self._grad_of: dict = {}  # id(.grad tensor) -> leaf tid
        self._grad_of_limit = 1024
        self._seen_compiled = False
        self._seen_jit = False
        self._metas: dict = {}  # interned (shape, dtype, device) tuples
        self._recent = collections.deque(maxlen=64)  # (storage ptr, tid) of recent results with history
        self._user_grad_stack: list = []
        self._bw_raw: dict = {}  # id(BackwardRecord) -> what _build_backwards turns into its nodes
        self._zg = None  # inside Optimizer.zero_grad(): [] or [its grad_set event]
        # leaves whose .grad was set to None (zero_grad(), `.grad = None`) since a backward last filled
        # it: tid -> that grad_set event. A read that finds None then is recorded (_grad_read).
        self._cleared: dict = {}
        self._watch = False  # bool(self._cleared), read on the hot path
        self._open: list = []  # (event, output tid) of grad-requiring results not yet freed by a backward
        self._open_overflow = False
        self.exception: BaseException | None = None

    # --- lifecycle -------------------------------------------------------------------------
    def start(self, entry_frame):
        self._entry = entry_frame
        _install_globals()
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self)
        self._on = True
        self.data.meta.update(torch=torch.__version__, python=sys.version.split()[0])
        if self._eager_compile:
            self._force_eager()
        self.__enter__()

    def _force_eager(self):
        """eager_compile=True: torch.compile'd functions run their own Python code eagerly while recording,
        so their ops are seen at the user's lines (numerics of an optimizing backend may differ slightly)."""
        try:
            self._stance = torch.compiler.set_stance("force_eager")
        except Exception as e:  # (an old torch without stances)
            self._internal(e)
            self._note("eager_compile=True needs torch.compiler.set_stance (torch>=2.6): compiled code ran compiled")
            return
        self.data.meta["eager_compile"] = True
        self._note("torch.compile'd code ran eagerly during this trace (eager_compile=True): its ops are recorded at "
                   "the user's own lines")

    def _resume(self):
        """Back on the mode stack after optimizer.step() (or when its closure runs the model)."""
        if self._suspended:
            self._suspended = False
            if not self._left_stack:
                torch._C._push_on_torch_function_stack(self)

    # --- stopping means stopping: steps= / max_events= reached ----------------------------------
    def _limit_reached(self):
        """Recording ends here; the recorder leaves the mode stack and its global hooks as soon as it
        is outside its own handler (where the mode is stashed), so the rest of the block runs plain."""
        self._on = False
        self._leave_pending = True

    def _off_stack(self):
        """Take this recorder off the torch-function mode stack for good, wherever it is on it (modes
        pushed above it stay, in their order). False when it is not there: inside its own handler."""
        if self._left_stack:
            return True
        if self._suspended:  # (already off, around optimizer.step())
            self._suspended = False
            self._left_stack = True
            return True
        n = _stack_len()
        i = n - 1
        while i >= 0 and _stack_at(i) is not self:
            i -= 1
        if i < 0:
            return False
        above = [torch._C._pop_torch_function_stack() for _ in range(n - 1 - i)]
        torch._C._pop_torch_function_stack()
        for m in reversed(above):
            torch._C._push_on_torch_function_stack(m)
        self._left_stack = True
        return True

    def _leave(self):
        """Off the mode stack and out of the global hooks (see _limit_reached)."""
        if not self._off_stack():
            return  # (pending: at the next module call)
        self._leave_pending = False
        stack = getattr(_local, "stack", [])
        if self in stack:
            stack.remove(self)
        if not self._left_hooks:
            self._left_hooks = True
            _remove_globals()

    def stop(self):
        if self._stance is not None:
            stance, self._stance = self._stance, None
            try:
                stance.__exit__(None, None, None)
            except Exception as e:
                self._internal(e)
        try:
            cur = torch.overrides._get_current_function_mode_stack()
            if self._left_stack:  # the recording ended early (steps=/max_events=): already off the stack
                pass
            elif self._suspended:  # optimizer.step() raised: the mode is already off the stack
                self._suspended = False
            elif cur and cur[-1] is self:
                self.__exit__(None, None, None)
            else:  # someone pushed a mode inside our block and did not pop it: pop ours anyway
                self._pop_out_of_order()
        finally:
            self._on = False
            self._leave_pending = False
            stack = getattr(_local, "stack", [])
            if self in stack:
                stack.remove(self)
            if not self._left_hooks:
                self._left_hooks = True
                _remove_globals()
            self._entry = None
            self._sync_live()
            self._release_params()
            self._synced_tensors = -1  # the per-event conversion is left to the first query (sync)

    def _release_params(self):
        """The recording is over: no reference of ours, strong or weak, stays on a module's parameters,
        buffers or parameter .grad (see _Held); they are found again through their module (_Slot).
        Other tensors keep their weak references."""
        slots = {}
        for m, _path in self._mod_path.items():
            m_ref = weakref.ref(m)
            for kind, d in (("p", getattr(m, "_parameters", None)), ("b", getattr(m, "_buffers", None))):
                for name, t in (d or {}).items():
                    if isinstance(t, _T):
                        slots.setdefault(id(t), (m_ref, kind, name, False))
                        if kind == "p" and t.grad is not None:
                            slots.setdefault(id(t.grad), (m_ref, kind, name, True))
        self._slots = slots
        ids, refs = self._ids, self._refs
        for tid, r in list(refs.items()):
            t = r()
            if t is not None and (type(r) is _Held or id(t) in slots):
                new = self._unpinned(t)
                new.tid = tid
                refs[tid] = new
                if ids.get(id(t)) is r:
                    ids[id(t)] = new
        # (names stay: a parameter no call used is named from them when it is asked about)
        self._param_names = {k: (self._unpinned(r()), name) for k, (r, name) in self._param_names.items()
                             if r() is not None}
        self._param_src = {k: (self._unpinned(r()), root, path) for k, (r, root, path) in self._param_src.items()
                           if r() is not None}
        self._param_owner = {}
        self._late_attrs = []

    def _unpinned(self, t):
        """A reference to ``t`` after the recording: through its module if it is a module's parameter,
        buffer or parameter .grad, else weak."""
        s = self._slots.get(id(t))
        if s is not None:
            try:
                mark = (t.data_ptr(), tuple(t.shape))
            except Exception:
                mark = None
            return _Slot(*s, id(t), mark)
        try:
            return _Ref(t)
        except TypeError:
            return _DeadRef()

    def _pop_out_of_order(self):
        from torch.overrides import _pop_mode, _push_mode

        above = []
        cur = torch.overrides._get_current_function_mode_stack()
        while cur and cur[-1] is not self:
            above.append(_pop_mode())
            cur = torch.overrides._get_current_function_mode_stack()
        if cur:
            self.__exit__(None, None, None)
        for m in reversed(above):
            _push_mode(m)
        self.data.unseen.append("another TorchFunctionMode was still active when the trace ended")

    def _guard(self, fn, *args):
        try:
            with _NO_TF():  # hooks run outside our handler: our own tensor reads must not re-enter it
                fn(*args)
        except Exception as e:  # recording must never break the user's program
            self._internal(e)

    def _note(self, text):
        if text not in self.data.unseen:
            self.data.unseen.append(text)

    def _internal(self, e):
        if len(self._errors) < 20:
            self._errors.append(f"{type(e).__name__}: {e}")

    # --- tensor identity -------------------------------------------------------------------
    def _tid(self, t, producer=None, link=True):
        r = self._ids.get(id(t))
        if r is not None and r() is t:
            return r.tid
        tid = self._next_tid
        self._next_tid = tid + 1
        tp = type(t)
        is_param = tp is _P or (tp is not _T and isinstance(t, _P))
        if is_param or (producer is None and id(t) in self._param_names):  # (see _Held)
            r = _Held(t) if self._slots is None else self._unpinned(t)
        elif producer is None and self._grad_of and self._grad_leaf(t) is not None:
            r = _GradRef(self._refs, self._grad_of[id(t)], id(t))
        else:
            try:
                r = _Ref(t)
            except TypeError:
                r = _DeadRef()
        r.tid = tid
        self._ids[id(t)] = r
        self._refs[tid] = r
        try:
            shape = tuple(t.shape)
            shape = self._shapes.setdefault(shape, shape)  # long-lived objects cost every full GC: share them
        except Exception:
            shape = ()
        base = t._base if t._is_view() else None
        dt = _DTYPES.get(t.dtype)
        if dt is None:
            dt = _DTYPES[t.dtype] = str(t.dtype).replace("torch.", "")
        info = TensorInfo(
            tid, shape, dt, "cpu" if t.is_cpu else str(t.device), t.requires_grad, _is_leaf(t),
            producer=producer, role="param" if is_param else "tensor",
            base=self._tid(base, link=False) if base is not None else None,
        )
        self.tensors[tid] = info
        named = False
        if producer is None:
            src = self._param_src.get(id(t))
            if src is not None and src[0]() is t:  # a tensor of a called model: its module path
                self._tid_src[tid] = (src[1], src[2])
                info.name = self._prefix.get(src[1], "") + src[2]
                if not is_param:
                    info.role = "buffer"
                named = True
        if self._in_opt:  # optimizer temporaries (exp_avg, denom): nothing to name or link
            return tid
        if producer is None and link and not named and self._entry is not None:
            f = _frames.first_user_frame(sys._getframe(), self._entry)
            # a trainable leaf first used deep inside (a Dataset's __getitem__ reading self.prompt): the
            # caller's variable for it, a few frames up
            trainable = info.requires_grad and info.is_leaf
            info.name = _frames.outer_var(f, self._entry, t, frames=4 if trainable else 1, public=True)
            # passed by attribute (`helper(x, m.scale)`): m.scale, cfg.temperature (not a parameter being built
            # in the trace: its model names it when called)
            if (trainable or is_param) and id(t) not in self._param_owner:
                if info.name is None:
                    info.name = _names.attr_name(f, self._entry, t)
                elif f is not None and _names.is_argument(f, info.name):
                    info.name = _names.attr_name(self._callers(f), self._entry, t, frames=3) or info.name
        if producer is None and not is_param and link:
            if self._recent and info.is_leaf and self._link_alias(t, info):
                pass
            elif (self._arrays or self._values) and not t.requires_grad:
                self._link_external(t, info)
        return tid

    def _grad_leaf(self, t):
        """The tid of the leaf whose .grad tensor ``t`` is (recorded after each backward), else None."""
        tid = self._grad_of.get(id(t))
        if tid is not None:  # (no reference on the .grad tensor itself: it is checked through its leaf)
            leaf = self._refs[tid]()
            if leaf is not None and leaf.grad is t:
                return tid
        return None

    def _grad_leaf_alive(self, key, tid):
        leaf = self._refs[tid]()
        g = leaf.grad if leaf is not None else None
        return g is not None and id(g) == key

    def tid_of(self, t):
        r = self._ids.get(id(t))
        if r is not None and (r() is t or type(r) is _Slot and r.matches(t)):
            return r.tid
        return None

    def _pack(self, ts) -> list:
        """The packed refs (see _pk) of tensors ``ts`` in their current state. Every recorded call
        runs this for its inputs, so _pk and the fast path of _tid are written out here."""
        ids = self._ids
        out = []
        for t in ts:
            r = ids.get(id(t))
            tid = r.tid if r is not None and r() is t else self._tid(t)
            try:
                v = t._version
            except RuntimeError:  # inference tensors have no version counter
                v = -1
            try:
                leaf = t.is_leaf
            except RuntimeError:  # a view made under no_grad whose base was then written in place
                leaf = True
            out.append(((v + 1) << 34) | (tid << 2) | (2 if t.requires_grad else 0) | (1 if leaf else 0))
        return out

    def _ref(self, t):
        """The packed ref (see _pk) of ``t`` in its current state."""
        return self._pack((t,))[0]

    def _link_alias(self, t, info):
        """A tensor first seen without a producer that shares memory with a recent result that has
        history: re-wrapped by something the mode cannot see (torch.autograd.Variable(t),
        torch.Tensor(t), Tensor._make_subclass). That is a cut."""
        try:
            ptr = t.data_ptr()
        except Exception:
            return False
        if not ptr:
            return False
        for aptr, nbytes, _, _ in self._arrays:
            if aptr <= ptr < aptr + max(nbytes, 1):
                return False  # memory that went through NumPy: torch.from_numpy (_link_external)
        n = len(self.events)
        for rptr, htid, hidx, numel, hrg in reversed(self._recent):
            if rptr == ptr and htid != info.tid:
                # the same address can be reused by a new allocation: trust the match only while the
                # original is alive, or for a fresh leaf made right after the original
                r = self._refs.get(htid)
                alive = r is not None and r() is not None
                if not alive and not (t.requires_grad and numel == t.numel() and hidx >= n - 3):
                    return False
                idx = len(self.events)
                info.producer = idx
                raw, flags = _frames.walk(sys._getframe(), self._entry)
                raw = self._rewrap_line(raw, t)
                self.events.append(Event(idx, "cut", "re-wrap (torch.autograd.Variable / torch.Tensor(t))", raw,
                                         (_pk(htid, hrg, not hrg),), (_pk(info.tid, t.requires_grad, True),),
                                         torch.is_grad_enabled(), False, self._module(), self._context(flags, True),
                                         "rewrap", {"inferred": "memory"}))
                return True
        return False

    def _rewrap_line(self, raw, t):
        """The re-wrap is noticed where the new tensor is first used; if the user's variable for it was
        assigned a few lines above by a re-wrapping call (`feats = Variable(feats, requires_grad=True)`),
        that line is the site."""
        if not raw:
            return raw
        f = _frames.first_user_frame(sys._getframe(), self._entry)
        if f is None or id(f.f_code) != raw[0][0]:
            return raw
        name = next((k for k, v in _frames.locals_of(f).items() if v is t), None)
        if name is None:
            return raw
        pat = re.compile(r"\s*%s\s*=[^=].*\b(Variable|Tensor|FloatTensor|_make_subclass|Parameter)\(" % re.escape(name))
        lo = f.f_code.co_firstlineno
        for ln in range(raw[0][1] - 1, max(lo, raw[0][1] - 30) - 1, -1):
            text = _linecache.getline(f.f_code.co_filename, ln)
            if pat.match(text):
                if ".data" in text or ".detach(" in text or ".numpy(" in text:
                    return raw  # (that line's own cut is recorded there and explains it)
                new = ((raw[0][0], ln),) + tuple(raw[1:])
                return self._raws.setdefault(new, new)
        return raw

    def _link_external(self, t, info):
        """A tensor first seen without a producer: did it come back from NumPy (shared memory,
        else same shape), or from escaped Python numbers (legacy torch.Tensor([...]))?"""
        try:
            ptr = t.data_ptr()
        except Exception:
            return
        link, how, op = None, None, "torch.from_numpy"
        for aptr, nbytes, shape, idx in reversed(self._arrays):
            if aptr <= ptr < aptr + max(nbytes, 1):
                link, how = idx, "memory"
                break
        if link is None:
            for aptr, nbytes, shape, idx in reversed(self._arrays):
                if tuple(shape) == info.shape:
                    link, how = idx, "shape"
                    break
        if link is None and self._values and t.numel() <= 256 and t.dtype.is_floating_point:
            try:
                with _Own():
                    vals = t.detach().flatten().tolist()
            except Exception:
                vals = ()
            for v in vals:
                e = self._values.get(v)
                if e is not None:
                    link, how, op = e, "value", "torch.Tensor(...)"
                    break
        if link is None:
            return
        idx = len(self.events)
        raw, flags = _frames.walk(sys._getframe(), self._entry)
        self.events.append(Event(idx, "external", op, raw, (), (_pk(info.tid, False, True),),
                                 torch.is_grad_enabled(), False, self._module(), "user", None,
                                 {"links": [link], "inferred": how}))
        info.producer = idx

    def note_requires_grad(self, t, value, raw, flags, step):
        """A ``requires_grad`` write that ran before this trace started, seen by gradscope.watch (at
        its step ``step``, from the user frames ``raw``): recorded as the mode would have recorded it."""
        with torch._C.DisableTorchFunction():  # (no mode sees gradscope's own reads)
            # a plain tensor is named after the user's variable as at a first use; a parameter by its model
            ref = _pk(self._tid(t, link=not isinstance(t, _P)), t.requires_grad, True, t._version)
        idx = len(self.events)
        self.events.append(Event(idx, "requires_grad", "torch.Tensor.requires_grad_", raw, [ref], (), True, False,
                                 None, self._context(flags, True), None, {"value": bool(value), "watch_step": step}))

    # --- the mode --------------------------------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        # (while some .grad is cleared since backward filled it, .grad reads are watched: one that finds
        # None is evidence, see _grad_read; otherwise property reads cost what they always did)
        # (.grad reads are not in _SKIP: they are watched while some .grad is cleared since backward
        # filled it, see _grad_read, and they can warn, see _WARNS)
        if not self._on or self._in_opt or func in _SKIP or _is_compiling():
            # (inside optimizer.step() its writes are summarised when it ends)
            return func(*args, **kwargs)
        code = _FCODE.get(func)
        if code is None:
            code = _classify(func)
        if code > _C_INPLACE:  # profiler markers, grad-mode switches, backward calls
            return self._other_call(code, func, args, kwargs)
        return self._record(code, func, args, kwargs)

    def _record(self, code, func, args, kwargs):
        """Call ``func`` and record it as an event (its inputs before, its outputs after)."""
        if _jit_tracing() is not None:
            return self._jit_traced(func, args, kwargs)
        try:
            pre = self._pre(func, args, kwargs, code)
        except Exception as e:
            self._internal(e)
            return func(*args, **kwargs)
        self._s0 = _seq()
        try:
            out = pre[9](func, args, kwargs)  # (called "from the user's line": see _caller)
        except BaseException as e:
            self._guard(self._post_error, pre, e, func)
            raise
        try:
            self._post(pre, func, args, kwargs, out)
        except Exception as e:
            self._internal(e)
            self._guard(self._post_minimal, pre, func, e)
        return out

    def _jit_traced(self, func, args, kwargs):
        """Inside torch.jit.trace: not recorded. The JIT tracer names graph values after the locals of
        the frames above each op, and a recording frame holding the result would change those names
        (its check_trace then fails: "Graphs differed across invocations")."""
        if not self._seen_jit:
            self._seen_jit = True
            self._note("ops run under torch.jit.trace were not recorded (the JIT tracer reads the frames above each "
                       "op to name its values)")
        return func(*args, **kwargs)

    def _post_minimal(self, pre, func, err):
        """_post failed (an odd tensor, or a gradscope bug): still record that the call happened, with
        its inputs and, for a write, its target, so the rules that need the event still see it."""
        refs, ins, raw, flags, grad_on, kind, target, before, saved, _ = pre
        detail = {"internal_error": f"{type(err).__name__}: {err}"[:300]}
        if kind == "inplace" and target is not None:
            detail["target"] = self._tid(target)
            detail["version_before"] = before
            try:
                detail["version_after"] = target._version
            except RuntimeError:
                detail["version_after"] = -1
            if saved is not None:
                detail["saved"] = True
                detail["saved_by"] = saved
        idx = len(self.events)
        self.events.append(Event(idx, kind, _name(func), raw, refs, (), grad_on, torch.is_inference_mode_enabled(),
                                 self._module(), self._context(flags, grad_on), None, detail))

    def _other_call(self, code, func, args, kwargs):
        if code == _C_PASS:
            return _caller(sys._getframe(2))(func, args, kwargs)  # (from the caller's line: see _WARNS)
        if code == _C_GRAD_GET:
            out = _caller(sys._getframe(2))(func, args, kwargs)  # (from the line that read it: see _caller)
            if not self._watch:
                return out
            if out is None and self._cleared:
                try:
                    self._grad_read(args[0])
                except Exception as e:
                    self._internal(e)
            return out
        if code == _C_IGNORE:
            # profiler markers; the one around Optimizer.zero_grad() opens a bracket in which the
            # per-parameter `p.grad = None` calls become one event
            if func is _RF_ENTER:
                self._zg = [] if args and str(args[0]).startswith("Optimizer.zero_grad#") else None
            elif func is _RF_EXIT:
                self._zg = None
                self._watch = bool(self._cleared)
            return func(*args, **kwargs)
        if code == _C_GRAD_SET:
            if args and self._grad_of:  # the .grad being replaced is gone (its id may come back)
                try:
                    old = self._ids.get(id(args[0].grad))
                    if type(old) is _GradRef:
                        old.gone = True
                except Exception as e:
                    self._internal(e)
            if self._zg is not None and len(args) > 1 and args[1] is None:
                out = func(*args, **kwargs)
                try:
                    self._zero_grad_set(args[0])
                except Exception as e:
                    self._internal(e)
                return out
            code = _C_OP
        elif code == _C_SET_GRAD:
            return self._grad_mode(func, args, kwargs)
        elif code == _C_BACKWARD:
            return self._backward(_BACKWARD[func], func, args, kwargs)
        return self._record(code, func, args, kwargs)

    def _full(self):
        if self._max_events is not None and len(self.events) >= self._max_events:
            if not self.data.truncated:
                self.data.truncated = True
                self.data.unseen.append(f"recording stopped after {self._max_events} events (max_events)")
            self._limit_reached()
            return True
        return False

    def _module(self):
        st = self._mod_stack
        return st[-1][0] if st else None

    @staticmethod
    def _context(flags, grad_on):
        if flags & F_OPTIM:
            return "optimizer"
        if flags & F_SETUP:
            return "setup"
        if flags & F_CHECKPOINT:
            return "checkpoint"
        if flags & F_APPLY:
            return "custom_function"
        if flags & (F_COMPILE | F_GENERATED):
            return "compiled"
        if flags & F_INIT:
            return "init"
        if flags & F_CLIP:
            return "clip"
        if flags & F_DATA:
            return "data"
        if flags & F_FUNCTORCH:
            return "functorch"
        if flags & F_BACKWARD:
            return "backward"
        return "user"

    def _zero_grad_set(self, t):
        """``p.grad = None`` inside Optimizer.zero_grad(): one grad_set event per zero_grad call,
        listing every parameter it cleared (one frame walk, not one per parameter)."""
        zg = self._zg
        if not zg:
            if self._full():
                return
            raw, flags = self._where(sys._getframe())
            idx = len(self.events)
            ev = Event(idx, "grad_set", "torch.Tensor.grad.__set__", raw, [], (), torch.is_grad_enabled(),
                       torch.is_inference_mode_enabled(), self._module(), self._context(flags, True), None,
                       _ZERO_GRAD_DETAIL)
            self.events.append(ev)
            zg.append(ev)
        ref = self._ref(t)
        zg[0].inputs.append(ref)
        self._cleared[_tid_of(ref)] = zg[0].index  # (watched from the end of zero_grad(): its own reads are not)

    def _grad_read(self, t):
        """``t.grad`` read as None by user code or gradient clipping after zero_grad() / ``.grad = None``
        cleared it: evidence of a consumer that came too late. Reads on one line are one event."""
        tid = self.tid_of(t)
        clear = self._cleared.get(tid) if tid is not None else None
        if clear is None:
            return
        f = sys._getframe(3)  # the frame that read .grad (above _grad_read, _other_call, the handler)
        cat = _frames.category(f.f_code)
        if cat != _frames.USER and not cat & F_CLIP:
            return  # torch's own bookkeeping (Module.zero_grad checks `p.grad is not None`), not a consumer
        raw, flags = self._where(f)
        last = self.events[-1] if self.events else None
        if last is not None and last.kind == "grad_read" and last.index >= self._synced and last.site == raw:
            last.inputs.append(_pk(tid, t.requires_grad, True))
            return
        if self._full():
            return
        idx = len(self.events)
        self.events.append(Event(idx, "grad_read", "torch.Tensor.grad.__get__", raw, [_pk(tid, t.requires_grad, True)],
                                 (), torch.is_grad_enabled(), torch.is_inference_mode_enabled(), self._module(),
                                 self._context(flags, True), None, {"found": None, "cleared_by": clear}))

    def _pre(self, func, args, kwargs, code):
        self._zg = None
        ins = _tensors(args, [])
        if kwargs:
            _tensors(kwargs, ins)
        cf = sys._getframe(3)  # the frame that made the call (above _pre, _record and the mode's handler)
        raw, flags = self._where(cf)
        grad_on = torch.is_grad_enabled()
        kind = "op"
        inplace_target = before = saved = None
        if code == _C_INPLACE:
            inplace_target = args[0] if args and isinstance(args[0], _T) else None
            if inplace_target is None and args and type(args[0]) in (list, tuple) and args[0] \
                    and isinstance(args[0][0], _T):
                kind = "inplace"
                before = [t for t in args[0] if isinstance(t, _T)]  # _foreach_mul_(grads, ...)
        elif kwargs:
            o = kwargs.get("out")
            if o is not None and isinstance(o, _T):
                inplace_target = o
            elif kwargs.get("inplace") is True and ins:
                inplace_target = ins[0]
        if inplace_target is not None:
            kind = "inplace"
            try:
                before = inplace_target._version
            except RuntimeError:
                before = -1
            saved = self._saved_info(inplace_target)
        return (tuple(self._pack(ins)), ins, raw, flags, grad_on, kind, inplace_target, before, saved, _caller(cf))

    def _post_error(self, pre, e, func=None):
        refs, ins, raw, flags, grad_on, kind, target, before, saved, _ = pre
        idx = len(self.events)
        self.events.append(Event(idx, kind, _name(func) if func is not None else "", raw, refs, (), grad_on, torch.is_inference_mode_enabled(),
                                 self._module(), self._context(flags, grad_on), None,
                                 {"error": f"{type(e).__name__}: {e}"[:500]}))
        self._error_event = idx
        return idx

    def _post(self, pre, func, args, kwargs, out):
        events = self.events
        idx = len(events)
        if self._max_events is not None and self._full():
            return
        refs, ins, raw, flags, grad_on, kind, target, before, saved, _ = pre
        special = _SPECIAL.get(func)  # one lookup classifies detach/convert/rewrap/... calls
        inference = torch.is_inference_mode_enabled()
        if flags & _CTX_FLAGS:
            if flags & F_COMPILE and self._eager_compile:
                flags &= ~F_COMPILE  # (compiled code running eagerly: the user's own ops)
            ctx = self._context(flags, grad_on)
            if ctx == "compiled" and raw and _frames.is_traced_line(raw[0][0]):
                ctx = "user"  # an eager op of the compiled graph, at the user's line Dynamo traced it from
                if not self._seen_compiled:
                    self._seen_compiled = True
                    self._note("ops inside torch.compile'd code are shown at the source lines of the frames "
                               "torch.compile traced them from")
            elif ctx == "compiled" and not self._seen_compiled:
                self._seen_compiled = True
                self._note("ops inside torch.compile'd code were recorded without their own source lines (at the "
                           "compiled function's level)")
            hold = flags & F_INIT  # made while a module is built: its parameters and buffers (see _Held)
        else:
            ctx = "user"
            hold = 0
        detail = {}
        cut = None
        outs_t = [out] if isinstance(out, _T) else _tensors(out, [])
        orefs = []
        out_rg = 0
        for o in outs_t:
            if o is target:
                orefs.append(self._ref(o))
                continue
            for i in ins:
                if o is i:  # an input returned as is
                    break
            else:
                i = None
            if i is not None:
                orefs.append(self._ref(o))
                continue
            tid = self._tid(o, producer=idx)
            if hold and self._slots is None:
                r = self._refs[tid]
                if type(r) is _Ref:
                    h = self._refs[tid] = self._ids[id(o)] = _Held(o)
                    h.tid = tid
            try:
                leaf = o.is_leaf
            except RuntimeError:  # (see _is_leaf)
                leaf = True
            rg = o.requires_grad
            orefs.append((1 << 34) | (tid << 2) | (2 if rg else 0) | (1 if leaf else 0))  # _pk
            if not leaf:
                out_rg = 2
                try:
                    # which event made this graph node, by its sequence number: the one node the call
                    # made is its output's (touching grad_fn gives the node a Python object, and a
                    # graph of such nodes is freed recursively: a deep one overflows the C stack)
                    s0 = self._s0
                    seq = s0 if _seq() - s0 == 1 else o.grad_fn._sequence_nr()
                    self._node_ev[seq] = idx
                    self._recent.append((o.data_ptr(), tid, idx, o.numel(), True))
                except Exception:
                    pass
            elif rg:
                out_rg = 2
        if not out_rg:
            for r in orefs:
                if r & 2:
                    out_rg = 2
                    break
        if out_rg and grad_on:
            op = self._open
            if len(op) < 100_000:
                op.append((idx, (orefs[0] >> 2) & 0xFFFFFFFF))
            else:
                self._open_overflow = True
        in_rg = False
        for r in refs:
            if r & 2:
                in_rg = True
                break

        if kind == "inplace" and target is None:
            detail["targets"] = [self._tid(t) for t in before]
            if self._grad_of:
                gof = [self._grad_leaf(t) for t in before]
                if any(x is not None for x in gof):
                    detail["grads_of"] = gof
        elif kind == "op" and refs:
            # writes hidden inside a torch function (e.g. F.embedding(max_norm=...) renormalising the weight)
            for t, r in zip(ins, refs):
                rv = (r >> 34) - 1  # _ver
                if rv >= 0:
                    try:
                        v = t._version
                    except RuntimeError:
                        continue
                    if v != rv:
                        kind = "inplace"
                        detail["hidden_write"] = True
                        target = t
                        before = rv
                        saved = self._saved_info(t)
                        break
        if kind == "inplace" and target is not None:
            if self._grad_of:
                gl = self._grad_leaf(target)
                if gl is not None:
                    detail["grad_of"] = gl
            detail["version_before"] = before
            try:
                detail["version_after"] = target._version
            except RuntimeError:
                detail["version_after"] = -1
            detail["target"] = self._tid(target)
            if target._base is not None:
                detail["base"] = self._tid(target._base)
            if saved is not None:  # an event index, 0 included
                detail["saved"] = True
                detail["saved_by"] = saved
            if func == _DATA_SET:
                kind, cut = "cut", "data_set"
            elif grad_on and not (target.is_floating_point() or target.is_complex()) and any(
                    r & 2 for i, r in zip(ins, refs) if i is not target):
                # a grad-requiring value written into an integer/bool tensor: truncated, no gradient
                kind, cut = "cut", "int_cast"
        elif special == "detach":
            if in_rg:
                kind, cut = "cut", _DETACH[func]
                if flags & F_TORCH and ctx == "user":
                    # torch itself detached the tensor on the user's behalf (DDP's constructor broadcasting the
                    # parameters, state_dict(), an observer reading statistics): not a cut the user made, and
                    # not a use of the tensor unless what it made is used (see Diagnosis.cone)
                    ctx = "library"
                for o, r in zip(outs_t, orefs):
                    try:
                        self._recent.append((o.data_ptr(), _tid_of(r), idx, o.numel(), False))
                    except Exception:
                        pass
        elif special == "convert":
            kind, cut = "cut", _CONVERT[func]
            self._escape(idx, func, out, ins)
        elif special == "rewrap":
            if in_rg and (not out_rg or all(o.grad_fn is None for o in outs_t)):
                kind, cut = "cut", "rewrap"
            elif not ins or not in_rg:
                self._reentry(idx, args, detail)
        elif special == "requires_grad":
            kind = "requires_grad"
            v = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
            detail["value"] = bool(v)
        elif special == "grad_set":
            kind = "grad_set"
            v = args[1] if len(args) > 1 else None
            detail["value"] = None if v is None else "tensor"
            if refs:
                if v is None:
                    self._cleared[_tid_of(refs[0])] = idx
                else:
                    self._cleared.pop(_tid_of(refs[0]), None)
                self._watch = bool(self._cleared)
        elif special == "hook":
            kind = "hook"
            fn = args[1] if len(args) > 1 else kwargs.get("hook")
            fr = _frames.return_lines(fn)
            if fr is not None:
                detail["hook_return"] = fr.to_json()
            detail["hook"] = getattr(fn, "__qualname__", repr(fn))[:200]
            if func is _POST_ACC_HOOK:  # runs after .grad is written and may change it in place
                detail["post_accumulate"] = True
            cells = getattr(fn, "__closure__", None)
            if cells:  # which closure cells it reads (hooks made in a loop that share one: late binding)
                detail["cells"] = [id(c) for c in cells]
                detail["freevars"] = list(fn.__code__.co_freevars)
                vals = []
                for c in cells:  # their values now (a loop variable changes between registrations)
                    try:
                        v = c.cell_contents
                        vals.append(repr(v)[:60] if type(v) in (int, float, bool, str, type(None)) else None)
                    except ValueError:  # an empty cell
                        vals.append(None)
                detail["cell_values"] = vals
            if ins:
                self._hooked.add(id(ins[0]))
            gf = ins[0].grad_fn if ins else None
            if gf is not None:  # the hook rewrites what this node receives: its hook sees it afterwards
                self._prehooked.add(gf._sequence_nr())
        elif special == "retain":
            for t in ins:
                self.tensors[self._tid(t)].retains_grad = True
        elif special is None and (ctx == "user" or ctx == "checkpoint" or ctx == "compiled"):
            if in_rg and outs_t and not out_rg and func not in _SHAPE_ONLY:
                if inference:
                    kind, cut = "cut", "inference_mode"
                elif not grad_on:
                    kind, cut = "cut", ("checkpoint" if ctx == "checkpoint" else "no_grad")
                else:
                    n = _short(_name(func)).rsplit(".", 1)[-1]
                    kind, cut = "cut", ("int_cast" if n in _CAST_NAMES else "nondiff")
            elif func in _ZERO_GRAD_OPS and in_rg and grad_on:
                kind, cut = "cut", "zero_grad_op"
            elif self._values or self._arrays:
                self._reentry(idx, args, detail)
        if grad_on and out_rg and in_rg and kind != "inplace":
            cons = self._consumers
            otids = [(o >> 2) & 0xFFFFFFFF for o in orefs]  # _tid_of
            for r in refs:  # every input, not only grad-requiring ones: a saved mask counts too
                rt = (r >> 2) & 0xFFFFFFFF
                lst = cons.get(rt)
                if lst is None:
                    cons[rt] = otids[:]
                else:
                    lst += otids
                    if len(lst) > 64:  # only recent consumers can still hold saved tensors that matter
                        del lst[:32]
        st = self._mod_stack
        name = _NAMES.get(func) or _name(func)
        events.append(Event(idx, kind, name, raw, refs, tuple(orefs), grad_on, inference,
                            st[-1][0] if st else None, ctx, cut, detail or _NO_DETAIL))
        if out_rg and in_rg and grad_on and cut is None and kind == "op" and len(orefs) > 1 and special is None:
            # max(dim=...), topk, sort, max_pool(return_indices=True): the values carry gradient, the
            # indices do not. Taking the indices is a cut of its own (a second event on the same line).
            nd = [r for r, o in zip(orefs, outs_t) if not r & 2 and not o.is_floating_point() and not o.is_complex()]
            if nd:
                j = len(events)
                tens = self.tensors
                for r in nd:
                    tens[(r >> 2) & 0xFFFFFFFF].producer = j
                events.append(Event(j, "cut", name, raw, refs, tuple(nd), grad_on, inference,
                                    st[-1][0] if st else None, ctx, "nondiff", {"outputs_of": idx}))

    # --- value lineage ---------------------------------------------------------------------
    def _escape(self, idx, func, out, ins):
        if type(out) in (float, int, bool) and type(out) is not bool:
            self._values[float(out)] = idx
        elif type(out) is list:
            for v in _floats(out, []):
                self._values[v] = idx
        elif hasattr(out, "__array_interface__"):
            try:
                ai = out.__array_interface__
                self._arrays.append((ai["data"][0], out.nbytes, tuple(out.shape), idx))
                if len(self._arrays) > 256:
                    del self._arrays[:128]
            except Exception:
                pass
        if len(self._values) > 200_000:
            self._values.clear()

    def _reentry(self, idx, args, detail):
        if not self._values:
            return
        vals = _floats(args, [], budget=2048)
        if not vals:
            return
        links = []
        get = self._values.get
        for v in vals:
            e = get(v)
            if e is not None and e not in links:
                links.append(e)
        if links:
            detail["links"] = links[:8]
            detail["inferred"] = "value"

    # --- in-place on saved tensors ---------------------------------------------------------
    _SAVED_ATTRS: dict = {}

    def _saved_info(self, t):
        """Is ``t`` (or a tensor sharing its storage) saved for backward by a live graph node?
        Returns the event index of the op that saved it (or -1 when unknown), else None."""
        try:
            ptr = t.untyped_storage().data_ptr()
        except Exception:
            return None
        if not ptr:
            return None
        if not _is_leaf(t) or t._base is not None:
            # probing reads graph nodes, which gives them Python objects, and a graph of such nodes is
            # freed recursively: bounded per graph, so a deep chain of in-place writes still frees
            self._probes -= 1
            if self._probes < 0:
                if self._probes == -1:
                    self._note(f"in-place writes were not checked against saved tensors after {_PROBES} of them in "
                               "one graph (checking reads graph nodes, and a deep graph of read nodes is freed "
                               "recursively)")
                return None
        cands = []
        if t.grad_fn is not None:
            cands.append((t.grad_fn, None))
        base = t._base
        if base is not None and base.grad_fn is not None:
            cands.append((base.grad_fn, None))  # e.g. y = x.exp(); y[:2].mul_(2)
        tid = self.tid_of(t)
        fam = [tid] if tid is not None else []
        if base is not None:
            b = self.tid_of(base)
            if b is not None:
                fam.append(b)
        i = 0
        while i < len(fam):  # the family grows by views (same storage) seen as outputs
            for otid in self._consumers.get(fam[i], ())[-16:]:
                r = self._refs.get(otid)
                o = r() if r is not None else None
                if o is None:
                    continue
                if o.grad_fn is not None:
                    cands.append((o.grad_fn, otid))
                if len(fam) < 16 and otid not in fam and o._base is not None:
                    try:
                        if o.untyped_storage().data_ptr() == ptr:
                            fam.append(otid)  # a view of the target: its consumers may save it
                    except Exception:
                        pass
            i += 1
        seen = set()
        for node, otid in cands:
            if node in seen:
                continue
            seen.add(node)
            if self._node_saves(node, ptr):
                return self._node_ev.get(node._sequence_nr(), -1) if hasattr(node, "_sequence_nr") else -1
        return None

    def _node_saves(self, node, ptr):
        try:
            if node.metadata.get(_FREED):
                return False
        except Exception:
            pass
        tp = type(node)
        names = self._SAVED_ATTRS.get(tp)
        if names is None:
            names = self._SAVED_ATTRS[tp] = tuple(a for a in dir(node) if a.startswith("_saved_"))
        for a in names:
            try:
                v = getattr(node, a)
            except RuntimeError as e:
                if "inplace" in str(e):
                    return True
                return False  # freed graph
            except Exception:
                continue
            vs = v if isinstance(v, (tuple, list)) else (v,)
            for x in vs:
                if isinstance(x, _T):
                    try:
                        if x.untyped_storage().data_ptr() == ptr:
                            return True
                    except Exception:
                        pass
        return False

    # --- grad mode -------------------------------------------------------------------------
    def _grad_mode(self, func, args, kwargs):
        prev = torch.is_grad_enabled()
        out = func(*args, **kwargs)
        try:
            if not self._full():
                raw, flags = self._where(sys._getframe())
                ctx = self._context(flags, prev)
                enabled = bool(args[0]) if args else bool(kwargs.get("mode", True))
                detail = {"enabled": enabled, "prev": prev}
                lib = _frames.library_caller(sys._getframe())
                if lib:
                    detail["lib_fn"] = lib  # entered inside a library function (e.g. Normal.sample)
                idx = len(self.events)
                self.events.append(Event(idx, "grad_mode", "torch.set_grad_enabled", raw, (), (), prev,
                                         torch.is_inference_mode_enabled(), self._module(), ctx, None, detail))
        except Exception as e:
            self._internal(e)
        return out

    # --- backward --------------------------------------------------------------------------
    def _backward(self, api, func, args, kwargs):
        self._in_opt = False
        try:
            rec, handles, state = self._backward_pre(api, args, kwargs)
        except Exception as e:
            self._internal(e)
            return func(*args, **kwargs)
        try:
            # (from the user's line, above _other_call and the mode: a warning torch.autograd.grad raises
            # with stacklevel=2 points there, as plain; see _caller)
            out = _caller(sys._getframe(3))(func, args, kwargs)
        except BaseException as e:
            for h in handles:
                h.remove()
            self._guard(self._backward_post, rec, state, None, e)
            raise
        for h in handles:
            h.remove()
        self._guard(self._backward_post, rec, state, out, None)
        return out

    def _backward_pre(self, api, args, kwargs):
        if api == "torch.autograd.grad":
            roots = args[0] if args else kwargs.get("outputs")
            inputs = args[1] if len(args) > 1 else kwargs.get("inputs")
        else:
            roots = args[0] if args else kwargs.get("tensors")
            inputs = kwargs.get("inputs")
        roots = _tensors(roots if isinstance(roots, (list, tuple)) else [roots], [])
        inputs_t = _tensors(inputs if isinstance(inputs, (list, tuple)) else [inputs], []) if inputs is not None else []
        raw, flags = self._where(sys._getframe())
        refs = tuple(self._pack(roots))
        in_refs = tuple(self._pack(inputs_t))
        idx = len(self.events)
        ev = Event(idx, "backward", api, raw, refs, in_refs,
                   torch.is_grad_enabled(), torch.is_inference_mode_enabled(), self._module(),
                   # the torch/autograd/__init__ frame that dispatched this very call is not a region
                   self._context(flags & ~F_BACKWARD, True), None,
                   {"api": api, "roots": [_tid_of(r) for r in refs], "inputs": [self._tid(t) for t in inputs_t],
                    "create_graph": bool(kwargs.get("create_graph", False)),
                    "retain_graph": bool(kwargs.get("retain_graph") or (len(args) > 2 and api == "Tensor.backward" and args[2]))})
        self.events.append(ev)
        rec = BackwardRecord(idx, api, tuple(_tid_of(r) for r in refs))
        # Walk the graph once: number the nodes (breadth first) and note what each is; then hook the
        # nodes needed to see every edge (below) for this call. Everything else (BackwardNode objects, which nodes ran, what
        # arrived where) is built from these plain lists when the trace is first queried.
        nodes = {}  # node -> nid
        order = []
        for t in roots:
            gf = t.grad_fn
            if gf is not None and gf not in nodes:
                nodes[gf] = len(order)
                order.append(gf)
        rec.root_nodes = tuple(nodes[t.grad_fn] for t in roots if t.grad_fn is not None)
        node_ev, prehooked = self._node_ev, self._prehooked
        raw_nodes = []  # by nid: [name, event index, next nids, leaf tid, node type, mode, input_nr per edge]
        got = []  # by run order: (nid, gradients it sent, gradients it received) - or their norms
        leaves = []  # (nid, tid)
        names = _NODE_NAMES
        indeg = [0] * len(order)  # edges into each node
        n_roots = len(order)
        leaf_obs = api != "torch.autograd.grad" and not inputs_t  # a leaf's .grad shows what reached it
        opaque = set()  # nodes whose hook does not see what their parent sent (tensor hooks)
        hooked_leaves = []  # leaves with hooks (tensor or post-accumulate-grad)
        ids = self._ids
        i = 0
        while i < len(order) and i < 200_000:
            n = order[i]
            nf = n.next_functions
            nxt = []
            for nx, _ in nf:
                if nx is None:
                    nxt.append(None)
                else:
                    j = nodes.get(nx)
                    if j is None:
                        j = nodes[nx] = len(order)
                        order.append(nx)
                        indeg.append(1)
                    else:
                        indeg[j] += 1
                    nxt.append(j)
            nrs = [nr for _, nr in nf]
            tp = type(n)
            nm = names.get(tp)
            if nm is None:
                nm = n.name()
                if tp.__name__ in nm:  # a type per node kind (not a shared generic wrapper): cache it
                    names[tp] = nm
            if nm == _ACCUMULATE:
                var = n.variable
                r = ids.get(id(var))
                leaf = r.tid if r is not None and r() is var else self._tid(var) if isinstance(var, _T) else None
                if leaf is not None:
                    leaves.append((i, leaf))
                # what reached it is its .grad after backward, if it had none before and no hooks
                # (a post-accumulate hook may step and clear it: optimizer-in-backward)
                post_acc = getattr(var, "_post_accumulate_grad_hooks", None)
                if post_acc or var._backward_hooks:  # a hook may rewrite the gradient in place (`g.zero_()`,
                    hooked_leaves.append(i)  # a mask on .grad): what was sent is measured as it is sent
                if (post_acc or var._backward_hooks) and id(var) not in self._hooked and leaf is not None:
                    self._hooks_before_trace(var, leaf)
                mode = _M_LEAF_SEEN if (leaf_obs and leaf is not None and var.grad is None
                                        and not var._backward_hooks and not post_acc) else _M_LEAF
                raw_nodes.append([nm, None, nxt, leaf, tp, mode, nrs])
            else:
                try:
                    sq = n._sequence_nr()
                    ev_i = node_ev.get(sq)
                    if sq in prehooked:  # a tensor hook changes what it receives
                        opaque.add(i)
                except Exception:
                    ev_i = None
                mh = _MUST_HOOK.get(tp)
                if mh or (mh is None and _must_hook(tp, nm)):
                    mode = _M_HOOK
                elif ev_i is None and nm in _PASS_THROUGH and len(nxt) == 1:
                    mode = _M_PASS  # a transpose/view inside a torch function: it sends what it got
                else:
                    mode = _M_NODE  # hooked or not: decided below
                raw_nodes.append([nm, ev_i, nxt, None, tp, mode, nrs])
            i += 1
        # Every edge's gradient must be seen from one end: the sender's hook (what it sent) or the
        # receiver's (what it got, when that edge is its only input), a leaf's .grad, or through a
        # pass-through node. Decided from the leaves up, about half the nodes of a chain need a hook.
        seen_in = [False] * len(raw_nodes)  # what reaches this node (its only input) is observed there
        hooked = []
        for i in range(len(raw_nodes) - 1, -1, -1):
            rn = raw_nodes[i]
            mode = rn[5]
            if mode == _M_NODE:
                for c in rn[2]:
                    if c is not None and not seen_in[c]:
                        rn[5] = _M_HOOK
                        hooked.append(i)
                        # (what a node behind a tensor hook receives is not what was sent)
                        seen_in[i] = indeg[i] == 1 and i >= n_roots and i not in opaque
                        break
                else:
                    rn[5] = _M_SKIP
            elif mode == _M_LEAF_SEEN:
                seen_in[i] = indeg[i] == 1
            elif mode == _M_PASS:
                c = rn[2][0]
                seen_in[i] = indeg[i] == 1 and c is not None and seen_in[c]
            elif mode == _M_HOOK:  # always hooked; what it receives is not read
                hooked.append(i)
        # what a hooked node receives is only needed where an un-hooked parent's edge is read there
        need_go = [False] * len(raw_nodes)
        for rn in raw_nodes:
            if rn[5] == _M_SKIP:
                for c in rn[2]:
                    while c is not None and raw_nodes[c][5] == _M_PASS:
                        c = raw_nodes[c][2][0]
                    if c is not None:
                        need_go[c] = True
        # senders into leaves whose .grad a post-accumulate hook may rewrite in place (and .grad may
        # be the very buffer sent): measure what they send at once, not when backward ends
        now = set()
        # (also: nodes behind a tensor hook, and leaves with hooks: a hook may change the buffer in place,
        # `g.zero_()`, before backward ends)
        if hooked_leaves or opaque:
            targets = set(hooked_leaves) | opaque
            for i, rn in enumerate(raw_nodes):
                for c in rn[2]:
                    while c is not None and raw_nodes[c][5] == _M_PASS:
                        c = raw_nodes[c][2][0]
                    if c in targets:
                        now.add(i)
        handles = []
        hstate = [got, raw_nodes, self._refs, 0, need_go, now]  # (.., bytes of big gradients kept so far, ..)
        for i in hooked:
            try:
                handles.append(order[i].register_hook(partial(_node_post, hstate, i)))
            except Exception:
                raw_nodes[i][5] = _M_LOST
        keep = bool(kwargs.get("retain_graph") or kwargs.get("create_graph")
                    or (api == "Tensor.backward" and len(args) > 2 and args[2]))
        return rec, handles, (raw_nodes, got, leaves, inputs_t and [self._tid(t) for t in inputs_t],
                              None if keep else order)

    def _hooks_before_trace(self, var, tid):
        """Hooks on a leaf registered before the trace began: recorded (once) as hook events without a
        registration site, so the diagnosis can still name the hook's line."""
        self._hooked.add(id(var))
        for hooks, post in ((var._backward_hooks, False), (getattr(var, "_post_accumulate_grad_hooks", None), True)):
            for fn in list((hooks or {}).values()):
                detail = {"hook": getattr(fn, "__qualname__", repr(fn))[:200], "before_trace": True}
                fr = _frames.return_lines(fn)
                if fr is not None:
                    detail["hook_return"] = fr.to_json()
                if post:
                    detail["post_accumulate"] = True
                idx = len(self.events)
                self.events.append(Event(idx, "hook", "torch.Tensor.register_post_accumulate_grad_hook" if post else
                                         "torch.Tensor.register_hook", (), (self._ref(var),), (),
                                         torch.is_grad_enabled(), False, None, "user", None, detail))

    def _backward_post(self, rec, state, out, err):
        raw_nodes, got, leaves, input_tids, graph = state
        if graph and err is None and not input_tids:
            self._probes = _PROBES  # (a new graph follows)
            # this graph's saved tensors are freed now: remember it on the nodes that _saved_info
            # may probe later (those made by recorded ops), so it never has to
            for n, rn in zip(graph, raw_nodes):
                if rn[1] is not None:
                    try:
                        n.metadata[_FREED] = True
                    except Exception:
                        pass
            if self._open:
                covered = {rn[1] for rn in raw_nodes if rn[1] is not None}
                self._open = [x for x in self._open if x[0] not in covered]
        # Edge norms locate a zeroing or non-finite node; they are only needed when a leaf ends up
        # with a zero or non-finite gradient (or backward failed). Otherwise: "a gradient was sent".
        leaf_now = []  # (leaf tid, its .grad) right after this backward
        if rec.api != "torch.autograd.grad":
            refs = self._refs
            for _, tid in leaves:
                t = refs[tid]()
                if t is not None:
                    leaf_now.append((tid, t.grad))
        statuses = _grad_statuses([g for _, g in leaf_now])
        need = err is not None or rec.api == "torch.autograd.grad" or any(
            st == "zero" or st == "nonfinite" for st, _ in statuses)
        outs_of = _edge_norms(got, need)
        got.clear()
        if err is not None:
            rec.error = f"{type(err).__name__}: {err}"[:2000]
            self._error_event = rec.event
        self._n_backward += 1
        ev = self.events[rec.event]
        leaf_val = {}  # tid -> norm of its .grad now (PRESENT: a gradient, not measurable; None: none)
        if rec.api != "torch.autograd.grad":
            grad_of = self._grad_of
            if len(grad_of) > self._grad_of_limit:  # drop the .grad tensors that are gone (zero_grad)
                grad_of = self._grad_of = {k: v for k, v in grad_of.items() if self._grad_leaf_alive(k, v)}
                self._grad_of_limit = max(1024, 2 * len(grad_of))
            tens = self.tensors
            cleared = self._cleared
            for (tid, g), (st, nm) in zip(leaf_now, statuses):
                if g is not None and cleared:
                    cleared.pop(tid, None)  # filled again
                    if not cleared:
                        self._watch = False
                gi = GradInfo(st, nm, rec.event)
                rec.leaf_grads[tid] = gi
                tens[tid].grad = gi
                leaf_val[tid] = None if g is None else (nm if nm is not None else PRESENT)
                if g is not None:  # later writes into this .grad tensor are attributed to its leaf
                    grad_of[id(g)] = tid
        else:
            grads = out if isinstance(out, (tuple, list)) else ()
            outs = []
            for tid, g in zip(input_tids or (), grads):
                st, nm = _grad_status(g)
                rec.leaf_grads[tid] = GradInfo(st, nm, rec.event)
                if isinstance(g, _T):
                    outs.append(_pk(self._tid(g, producer=rec.event, link=False), g.requires_grad, g.is_leaf))
            ev.outputs = tuple(self._tref(o, self.tensors) for o in outs) if rec.event < self._synced else tuple(outs)
        self.data.backwards.append(rec)
        self._bw_raw[id(rec)] = (rec, raw_nodes, outs_of, leaf_val)
        if len(self.data.backwards) > 8:  # keep the graph details of the recent backward calls only
            old = self.data.backwards[-9]
            if self._bw_raw.pop(id(old), None) is not None or old.nodes:
                old.nodes = {}
                self._note("graph details of backward calls older than the last 8 were dropped to save memory")
        if self._steps is not None and self._n_backward >= self._steps:
            self._limit_reached()
            self.data.truncated = True
            self.data.unseen.append(f"recording stopped after {self._steps} backward call(s) (steps={self._steps})")

    def _build_backwards(self):
        """BackwardNode objects, ran flags, arrived norms and the first non-finite node of the
        backward calls recorded since the last query (pure: from the lists _backward_post kept)."""
        pend = self._bw_raw
        self._bw_raw = {}
        for rec, raw_nodes, seen, leaf_val in pend.values():
            _build_backward(rec, raw_nodes, seen, leaf_val, self._note)

    # --- module / optimizer hooks --------------------------------------------------------------
    def _module_pre(self, module, frame):
        self._zg = None
        if self._in_opt or self._suspended:
            # an optimizer closure runs the model (LBFGS): record it. Or optimizer.step() raised,
            # the program caught it and went on: close the step's record now.
            self._resume()
            self._in_opt = False
            if self._opt_pending is not None and not _frames.walk(sys._getframe(), self._entry)[1] & F_OPTIM:
                self._note("an optimizer.step() raised inside the trace; torch calls between it and the next module "
                           "call were not recorded")
                self._optimizer_step_done(None)
        st = self._mod_stack
        if not st:
            self._ensure_root(module)
        path = self._mod_path.get(module)
        if path is None:
            self._ensure_root(module, force=True)
            path = self._mod_path.get(module, type(module).__name__)
        fp = _FAST_PATH.get(type(module))
        if fp is None:
            fp = _FAST_PATH[type(module)] = isinstance(module, (nn.MultiheadAttention, nn.TransformerEncoderLayer,
                                                                nn.TransformerEncoder))
        if fp and not module.training:
            self._fast_path_off(module, path)
        # where this call is, walked once: the module's own event and every op inside it (and the
        # calls of its children) reuse it, walking only up to this frame
        raw, flags = self._where(frame)
        # (without F_TORCH: the ops inside inherit only region flags; F_TORCH on an op then means that
        # torch code between it and its nearest user frame made the call: see _post, library detach)
        st.append((path, id(frame), id(frame.f_back), raw, flags & self._inherit))

    def _fast_path_off(self, module, path):
        """nn.MultiheadAttention / nn.TransformerEncoder(Layer) in eval without autograd take a fused fast
        path only when no TorchFunctionMode is active (torch.overrides.has_torch_function): under the
        recording they run their reference path. Said once in the trace, naming the modules."""
        if torch.is_grad_enabled() and not torch.is_inference_mode_enabled() and any(
                p.requires_grad for p in module.parameters()):
            return  # (no fast path with autograd on, traced or not)
        paths = self.data.meta.setdefault("fast_path_off", [])
        label = f"{path} ({type(module).__name__})" if path else type(module).__name__
        if label in paths:
            return
        old = _fast_path_note(paths) if paths else None
        paths.append(label)
        text = _fast_path_note(paths)
        un = self.data.unseen
        if old in un:
            un[un.index(old)] = text
        else:
            un.append(text)

    def _where(self, f):
        """(user frames innermost first, context flags) for a call made from frame ``f``: walks up
        to the innermost running module call and reuses that call's walk for the rest."""
        st = self._mod_stack
        top = st[-1] if st else None
        user, flags, hit = _frames.walk_until(f, self._entry, top[1] if top else -1)
        if not hit:
            if top is not None and self._drop_stale(f):
                return self._where(f)
            return self._raws.setdefault(user, user), flags
        if not user:
            return top[3], flags | top[4]
        raw = (user + top[3])[:16]
        return self._raws.setdefault(raw, raw), flags | top[4]

    def _drop_stale(self, f):
        """Entries of module calls whose forward raised (their forward hook never ran): those whose frame
        is no longer an ancestor of frame ``f``. True when any was dropped."""
        live = set()
        while f is not None:
            live.add(id(f))
            f = f.f_back
        st = self._mod_stack
        n = len(st)
        while st and st[-1][1] not in live:
            st.pop()
        return len(st) != n

    def _module_post(self, module, args, output, frame):
        st = self._mod_stack
        fid = id(frame)
        if st and st[-1][1] == fid:
            entry = st.pop()
        else:  # forward raised (called from _call_impl), or entries left by calls that raised
            entry = None
            for k in range(len(st) - 1, -1, -1):
                if st[k][1] == fid or st[k][2] == fid:
                    entry = st[k]
                    del st[k:]
                    break
            if entry is None or frame.f_code is _CALL_IMPL:
                return  # (forward raised: no module event)
        if self._max_events is not None and self._full():
            return
        path, _, _, raw, flags = entry
        ins = _tensors(args, [])
        outs = [output] if isinstance(output, _T) else _tensors(output, [])
        if not ins and not outs:
            return
        in_refs = self._pack(ins)
        out_refs = self._pack(outs)
        cls = type(module).__name__
        detail = _CLASS_DETAIL.get(cls)
        if detail is None:
            detail = _CLASS_DETAIL[cls] = {"class": cls}  # shared, read-only
        if ins and outs:
            returned = False
            for o in outs:
                for i in ins:
                    if o is i:
                        returned = True
            if returned:
                detail = {"class": cls, "returned_input": True}
                fr = _frames.early_return_of_input(module)
                if fr is not None:
                    detail["return_line"] = fr.to_json()
        events = self.events
        events.append(Event(len(events), "module", path or cls, raw, tuple(in_refs), tuple(out_refs),
                            torch.is_grad_enabled(), torch.is_inference_mode_enabled(), st[-1][0] if st else None,
                            "user" if not flags & _CTX_FLAGS else self._context(flags, True), None, detail))

    def _ensure_root(self, module, force=False):
        """A module tree entered for the first time: find the user's variable for it (or for the model
        that holds it) and record every module's and tensor's path now, while the frames are alive."""
        for r in self._roots:
            if r.ref() is module and not force:
                return
        if not force and module in self._mod_path:
            return
        if force and _names.compiler_made(module) and _frames.walk(sys._getframe(), self._entry)[1] & F_COMPILE:
            self._mod_path[module] = type(module).__name__  # a graph torch.compile made and runs: not a model
            return
        f = _frames.first_user_frame(sys._getframe(), self._entry)
        try:
            var, root = _names.find_root(f, self._entry, module, self._mod_path.get)
        except Exception as e:
            self._internal(e)
            var, root = None, module
        taken = {r.var for r in self._roots if r.ref() is not None and r.ref() is not root}
        if var is not None and var in taken and f is not None:
            # the same parameter name (`field`) for two models (coarse and fine, passed to one helper):
            # the caller's own variable for this one
            var = _frames.outer_var(self._callers(f), self._entry, root, skip=taken) or var
        # drop roots that are inside the new one (their tensors are renamed under it), and gone ones that
        # named no tensor (a parameter-free module made in each forward: `nn.Dropout(p)(x)`)
        owners = {r for r, _ in self._tid_src.values()}
        keep = [r for r in self._roots
                if ((m := r.ref()) is None and r in owners)
                or (m is not None and m is not root and not _names.contains(root, m))]
        try:
            inner = _names.unwrap(root)
            keep.append(_Root(weakref.ref(root), var, _names.flat(root), type(inner).__name__, not inner._modules))
        except TypeError:
            return
        self._roots = keep
        self._rename()

    def _callers(self, f):
        """The user frame that called user frame ``f`` (None at the traced block's own frame)."""
        return _names.callers(f, self._entry)

    def _rename(self):
        """Module paths and tensor names from every live root (walked now); names of tensors already
        seen are kept per root, so they survive the model (a local of a function that returned)."""
        walked = []
        rels: dict = {}  # root -> relative tensor paths (for names that would coincide)
        for r in self._roots:
            root = r.ref()
            if root is None:
                continue
            try:
                mods, tens = _names.walk(root)
            except Exception as e:
                self._internal(e)
                continue
            walked.append((r, mods, tens))
            rels[r] = {p for p, _ in tens}
        for r, rel in self._tid_src.values():
            rels.setdefault(r, set()).add(rel)
        pre = self._prefix = self._prefixes(rels)
        mp = self._mod_path = _ModulePaths()
        src: dict = {}
        names: dict = {}
        tied: dict = {}
        for r, mods, tens in walked:
            p = pre.get(r, "")
            for path, m in mods:
                if m not in mp:
                    mp[m] = _names.join(p[:-1], path)
            for path, t in tens:
                k = id(t)
                if k in src:
                    if src[k][1] is r:
                        tied.setdefault(k, []).append(p + path)
                    continue
                # strong while recording, through the module after it: never a weak reference on a module's
                # tensor (torch.utils.swap_tensors refuses those; see _Held)
                ref = _Held(t) if self._slots is None else self._unpinned(t)
                src[k] = (ref, r, path)
                names[k] = (ref, p + path)
        self._param_src = src
        self._param_names = names
        self._tied_names = tied
        tsrc = self._tid_src
        for ref, r, path in src.values():
            t = ref()
            tid = self.tid_of(t) if t is not None else None
            if tid is not None:
                tsrc[tid] = (r, path)
                info = self.tensors[tid]
                if info.role == "tensor":
                    info.role = "param" if isinstance(t, nn.Parameter) else "buffer"
        self._apply_names()

    def _prefixes(self, rels):
        """root -> the prefix of its names: its variable when there are several roots (or its own names
        are bare indices: ``model.0.weight``), else none. Roots whose names would coincide (no variable,
        or the same one) are told apart by class name, then by order."""
        roots = self._roots
        multi = sum(1 for r in roots if rels.get(r)) > 1  # (modules without tensors do not count)
        # a lone layer without a variable (`nn.Linear(4, 4)(x)` made in a forward) is called by its class:
        # a bare "weight" would say nothing
        pre = {r: (f"{r.var}." if r.var and (multi or r.flat) else f"{r.cls.lower()}." if r.leaf and not r.var
                   else "") for r in roots}
        groups: dict = {}
        for r in roots:
            groups.setdefault(pre[r], []).append(r)
        used = set(pre.values())
        for p, group in groups.items():
            if len(group) < 2:
                continue
            seen: set = set()
            clash = False
            for r in group:
                s = rels.get(r, ())
                if not seen.isdisjoint(s):
                    clash = True
                    break
                seen.update(s)
            if not clash:
                continue
            for r in group[1:]:
                base = r.var or r.cls.lower()
                cand, n = (None if r.var else f"{base}."), 1
                while cand is None or cand in used:
                    n += 1
                    cand = f"{base}_{n}."
                used.add(cand)
                pre[r] = cand
        return pre

    def _apply_names(self):
        """Every module tensor the trace saw gets its name (root prefix + module path); the other
        spelling (with or without the root's variable) is kept as an alias for ``resolve``."""
        pre = self._prefix
        tens = self.tensors
        aliases: dict = {}
        for tid, (r, rel) in self._tid_src.items():
            info = tens.get(tid)
            if info is None:
                continue
            p = pre.get(r)
            if p is None:  # a root dropped for a bigger one that holds it
                p = f"{r.var}." if r.var and r.flat else ""
            info.name = p + rel
            if r.var:
                a = rel if p else f"{r.var}.{rel}"
                aliases[a] = tid if a not in aliases else None  # (ambiguous: not an alias)
        # a tied weight (lm_head.weight = wte.weight) answers to its other module paths too
        for pid, others in self._tied_names.items():
            ent = self._param_src.get(pid)
            p = ent[0]() if ent is not None else None
            tid = self.tid_of(p) if p is not None else None
            if tid is None:
                continue
            r = ent[1]
            pre = self._prefix.get(r, "")
            for o in others:
                bare = o[len(pre):] if pre and o.startswith(pre) else o
                for a in (o, bare, f"{r.var}.{bare}" if r.var else bare):
                    if a not in aliases:
                        aliases[a] = tid
        self.data.meta["name_aliases"] = {a: t for a, t in aliases.items() if t is not None and tens[t].name != a}
        self.data.meta["model_tensors"] = sorted(self._tid_src)  # tensors of a model the trace called

    def _module_registered(self, module, name, sub):
        old = module._modules.get(name) if hasattr(module, "_modules") else None
        if old is None or old is sub:
            return
        raw, flags = _frames.walk(sys._getframe(), self._entry)
        if flags & F_INIT and not raw:
            return
        if _names.constructing(_frames.first_user_frame(sys._getframe(), self._entry), self._entry, module):
            # built in its own __init__ (`self.resnet = nn.Sequential(*list(self.resnet.children())[:-1])`):
            # not a replacement anything could hold; the tensors it drops keep their old path as name
            kept = {id(p) for p in sub.parameters()} if isinstance(sub, nn.Module) else ()
            for pn, p in old.named_parameters():
                tid = self.tid_of(p)
                if tid is not None and id(p) not in kept and self.tensors[tid].name is None:
                    self.tensors[tid].name = f"{name}.{pn}"
            return
        old_params = []
        # parameters the new submodule keeps (`self.resnet = nn.Sequential(*list(self.resnet.children())[:-1])`)
        # stay in the model: only the others leave it
        kept = {id(p) for p in sub.parameters()} if isinstance(sub, nn.Module) else ()
        for pn, p in old.named_parameters():
            if id(p) in kept:
                continue
            tid = self._tid(p)
            old_params.append(tid)
            info = self.tensors[tid]
            if info.name is None:
                ent = self._param_names.get(id(p))
                info.name = ent[1] if ent and ent[0]() is p else f"{name}.{pn}"
        idx = len(self.events)
        path = self._mod_path.get(module)
        attr = f"{path}.{name}" if path else name
        if path is None:
            self._late_attr(module, name, idx, {t: self.tensors[t].name.rsplit(".", 1)[-1] for t in old_params})
        self.events.append(Event(idx, "module_set", attr, raw, (), (), torch.is_grad_enabled(), False,
                                 self._module(), self._context(flags, True), None,
                                 {"attr": attr, "old_class": type(old).__name__, "new_class": type(sub).__name__,
                                  "old_params": old_params}))
        self._names_dirty = True

    def _late_attr(self, module, name, idx, old, new=None):
        try:
            self._late_attrs.append((weakref.ref(module), name, idx, old, _Held(new) if new is not None else None))
        except TypeError:
            pass

    def _fill_late_attrs(self):
        """Paths of modules changed before the model was called (now that its root is known), and
        whether a parameter put in place of another belongs to another module (tied weights)."""
        keep = []
        for r, name, idx, old, newr in self._late_attrs:
            m = r()
            path = self._mod_path.get(m) if m is not None else None
            if path is None:
                keep.append((r, name, idx, old, newr))
                continue
            attr = f"{path}.{name}" if path else name
            e = self.events[idx]
            e.op = attr
            e.detail["attr"] = attr
            new = newr() if newr is not None else None
            ent = self._param_names.get(id(new)) if new is not None else None
            if ent is not None and ent[0]() is new and ent[1] != attr:
                e.detail["tied"] = True
                e.detail["tied_to"] = ent[1]
                own = self._param_owner.get(id(new))
                if own is not None and own[3] is e.site:  # (the tying line did not create it)
                    del self._param_owner[id(new)]
            for tid, short in old.items():  # the old parameters still carry the fallback name
                info = self.tensors.get(tid)
                if info is not None and info.name in (name, f"{name}.{short}"):
                    info.name = attr if info.name == name else f"{attr}.{short}"
        self._late_attrs = keep

    def _param_registered(self, module, name, param):
        if param is None:
            return
        raw, flags = _frames.walk(sys._getframe(), self._entry, limit=6)
        old = getattr(module, "_parameters", {}).get(name)
        if (old is not None and old is not param and not (flags & F_INIT and not raw)
                and not _names.constructing(_frames.first_user_frame(sys._getframe(), self._entry), self._entry,
                                            module)):
            # `layer.weight = other_param` (weight tying) or `= nn.Parameter(...)`: the old parameter
            # (perhaps the one an optimizer holds) leaves the model, like a replaced submodule
            tid = self._tid(old)
            info = self.tensors[tid]
            path = self._mod_path.get(module)
            attr = f"{path}.{name}" if path else name
            if info.name is None:
                ent = self._param_names.get(id(old))
                info.name = ent[1] if ent and ent[0]() is old else attr
            idx = len(self.events)
            # (its path, if the model was not called yet, and whether the new parameter is another
            # module's, i.e. tied weights, are filled in at stop)
            self._late_attr(module, name, idx, {tid: ""}, param)
            self.events.append(Event(idx, "module_set", attr, raw, (), (), torch.is_grad_enabled(), False,
                                     self._module(), self._context(flags, True), None,
                                     {"attr": attr, "old_class": "Parameter", "new_class": "Parameter",
                                      "old_params": [tid], "tied": False}))
            self._names_dirty = True
        # nn.Parameter(t) around a tensor with history: a re-wrap that cuts the graph
        if self.tid_of(param) is None and self.events:
            try:
                ptr = param.data_ptr()
            except Exception:
                ptr = 0
            if ptr:
                n = len(self.events)
                for rptr, htid, hidx, numel, hrg in reversed(self._recent):
                    if rptr == ptr and hrg and hidx >= n - 3 and numel == param.numel():
                        idx = len(self.events)
                        ptid = self._tid(param, producer=idx)
                        self.events.append(Event(idx, "cut", "torch.nn.Parameter", raw, (_pk(htid, True, False),),
                                                 (_pk(ptid, param.requires_grad, True),), torch.is_grad_enabled(),
                                                 torch.is_inference_mode_enabled(), self._module(),
                                                 self._context(flags, True), "rewrap", {"attr": name}))
                        break
        prev = self._param_owner.get(id(param))
        if prev is not None and prev[0]() is param:
            return  # (tied: the module that created it stays its owner)
        try:
            self._param_owner[id(param)] = (_Held(param), type(module).__name__, name, raw)
        except TypeError:
            pass

    def _graph_open(self) -> bool:
        """Can a graph built by recorded ops still hold saved tensors? False once every recorded op
        that produced a grad-requiring result since then was part of a backward that freed its graph
        (or its results are gone)."""
        if self._open_overflow:
            return True
        op = self._open
        if op:
            refs = self._refs
            op[:] = [(i, t) for i, t in op if (r := refs.get(t)) is not None and r() is not None]
        return bool(op)

    def _optimizer_step(self, opt):
        if self._opt_pending is not None:  # the previous step raised and nothing closed its record
            self._note("an optimizer.step() raised inside the trace; torch calls between it and the next module "
                       "call were not recorded")
            self._optimizer_step_done(None)
        if self._full():
            return
        raw, flags = _frames.walk(sys._getframe(), self._entry)
        params = []
        # the step's writes into parameters are recorded as one event when it ends: versions now,
        # and whether autograd still holds any of them (only if a recorded graph may still be alive)
        tensors, before, saved = [], [], {}
        probe = self._graph_open()
        cleared = self._cleared
        found_none = []  # held, cleared since backward filled it: the step reads None and skips it
        for g in opt.param_groups:
            for p in g["params"]:
                tid = self._tid(p)
                params.append(tid)
                if p.grad is None:
                    if tid in cleared:
                        found_none.append(tid)
                    continue
                tensors.append((p, tid))
                before.append(p._version)
                if probe:
                    sv = self._saved_info(p)
                    if sv is not None:
                        saved[tid] = sv
        self._trainable.update(params)
        self._in_opt = True
        idx = len(self.events)
        detail = {"class": type(opt).__name__, "params": params}
        if found_none:
            detail["found_none"] = found_none
        self.events.append(Event(idx, "optimizer_step", f"{type(opt).__name__}.step", raw, (), (),
                                 torch.is_grad_enabled(), False, None, "user", None, detail))
        self._opt_pending = (idx, raw, tensors, before, saved, type(opt).__name__)

    def _optimizer_step_done(self, opt):
        pend, self._opt_pending = self._opt_pending, None
        self._in_opt = False
        if pend is None or self._full():
            return
        step_idx, raw, tensors, before, saved, cls = pend
        tids, vb, va, refs = [], [], [], []
        for (p, tid), v in zip(tensors, before):
            now = p._version
            if now != v:
                tids.append(tid)
                vb.append(v)
                va.append(now)
                refs.append(_pk(tid, p.requires_grad, p.is_leaf, now))
        if not tids:
            return
        detail = {"targets": tids, "versions_before": vb, "versions_after": va, "step": step_idx}
        hit = [t for t in tids if t in saved]
        if hit:
            detail["saved"] = hit
            detail["saved_by"] = {t: saved[t] for t in hit}
        idx = len(self.events)
        self.events.append(Event(idx, "inplace", f"{cls}.step", raw, tuple(refs), (),
                                 False, False, None, "optimizer", None, detail))

    # --- materialize ---------------------------------------------------------------------------
    def sync(self):
        """Turn raw records into plain data (sites, tensor refs, names). True when anything changed.

        While recording, everything is brought up to date. After :meth:`stop` (which already took
        what needs live objects: names, owners, module facts), the per-event conversion happens
        here, on the first query: a trace nobody looks at never pays for it."""
        ev = self.events
        if self._synced == len(ev) and self._synced_tensors == self._next_tid and not self._on and not self._bw_raw:
            self._refresh_alive()
            return False
        self._synced_tensors = self._next_tid
        tens = self.tensors
        make_site = _frames.make_site
        refs_seen: dict = {}  # the same tensor in the same state is one TensorRef object

        def tref(r, tens):
            if isinstance(r, TensorRef):
                return r
            x = refs_seen.get(r)
            if x is None:
                x = refs_seen[r] = self._tref(r, tens)
            return x

        for i in range(self._synced, len(ev)):
            e = ev[i]
            if type(e.site) is tuple or e.site is None:
                e.site = make_site(e.site) if e.site else None
            e.inputs = tuple([tref(r, tens) for r in e.inputs])
            e.outputs = tuple([tref(r, tens) for r in e.outputs])
        self._synced = len(ev)
        if self._bw_raw:
            self._build_backwards()
        if self._on:
            self._sync_live()
        self._refresh_alive()
        infer_names(self.data)
        return True

    def _sync_live(self):
        """What needs the live objects: parameter and module names, parameter owners, module facts."""
        if self._roots:
            self._rename()
        else:
            self._apply_names()
        if self._late_attrs:
            self._fill_late_attrs()
        tied = {}  # a Parameter registered under several names (tied weights): its other names
        for pid, others in self._tied_names.items():
            ent = self._param_src.get(pid)
            p = ent[0]() if ent is not None else None
            tid = self.tid_of(p) if isinstance(p, nn.Parameter) else None
            if tid is not None:
                tied[str(tid)] = others
        self.data.meta["tied_params"] = tied
        self.data.meta["left_model"] = self._left_models()
        self.data.meta["trainable"] = sorted(self._trainable)
        self.data.meta["internal_errors"] = list(self._errors)
        owners = {}
        for pid, (r, cls, attr, raw) in self._param_owner.items():
            p = r()
            if p is None:
                continue
            tid = self.tid_of(p)
            if tid is not None:
                site = _frames.make_site(raw)
                owners[str(tid)] = {"class": cls, "attr": attr, "site": site.to_json() if site else None}
        self.data.meta["param_owner"] = owners
        self._module_facts()

    def _left_models(self):
        """Tids of parameters the trace saw that no called model holds now (a submodule replaced in
        __init__ took its old parameters out, or they are gone); None when no model was called."""
        ids = set()
        for r in self._roots:
            root = r.ref()
            if root is None:
                continue
            try:
                ids.update(id(p) for p in root.parameters())
            except Exception:
                return None
        if not ids:
            return None
        out = []
        refs = self._refs
        for tid, info in self.tensors.items():
            if info.role == "param":
                r = refs.get(tid)
                p = r() if r is not None else None
                if p is None or id(p) not in ids:  # (gone: nothing, so no model, holds it)
                    out.append(tid)
        return out

    def _module_facts(self):
        """Static facts about called modules: children skipped by an early return, backward hooks."""
        called = {e.op for e in self.events if e.kind == "module"}
        skipped = {}
        defined = {}  # child path -> Frame of the line that defines it, for children that were never called
        hooks = {}
        fwd_hooks = {}
        hook_params = {}  # tid -> the module whose forward hook uses it (an adapter attached by a hook)
        ran = {cid for raw in self._raws for cid, _ in raw}  # code objects of the user's lines that ran
        by_path = {}
        for m, path in self._mod_path.items():
            by_path.setdefault(path, m)
        for m, path in self._mod_path.items():
            try:
                hk = list(getattr(m, "_backward_hooks", {}).values()) + list(getattr(m, "_backward_pre_hooks", {}).values())
                if hk:
                    frs = [_frames.return_lines(h) for h in hk]
                    hooks[path] = [f.to_json() for f in frs if f is not None]
                fh = list(getattr(m, "_forward_hooks", {}).values())
                if fh:  # a forward hook that returns a value replaces the module's output (after our hook saw it)
                    frs = [_frames.value_return(h) for h in fh]
                    frs = [f.to_json() for f in frs if f is not None]
                    if frs:
                        fwd_hooks[path] = frs
                    for h in fh + list(getattr(m, "_forward_pre_hooks", {}).values()):
                        self._hook_modules(h, path, hook_params)
                if path not in called and (path or "") != "":
                    if isinstance(m, (nn.ModuleList, nn.ModuleDict)) and path:
                        self._partly_iterated(m, path, called, skipped)
                    continue
                for cname, child in m.named_children():
                    cpath = f"{path}.{cname}" if path else cname
                    if cpath in called or child is None:
                        continue
                    fr = _frames.return_before_attr(m, cname, ran)
                    up = path
                    while fr is None and up:  # an early return in an ancestor's method that reaches it as
                        up = up.rpartition(".")[0]  # self.student.unsup_proj
                        anc = by_path.get(up)
                        if anc is not None:
                            fr = _frames.return_before_attr(anc, cname, ran)
                    if fr is not None:
                        skipped[cpath] = {"parent": path, "return_line": fr.to_json()}
                    df = _frames.attr_definition(m, cname)
                    if df is not None:  # where the never-called child is defined (self.extra = ...)
                        defined[cpath] = df.to_json()
            except Exception as e:
                self._internal(e)
        self.data.meta["skipped_children"] = skipped
        self.data.meta["uncalled_defined"] = defined
        self.data.meta["module_hooks"] = hooks
        self.data.meta["module_forward_hooks"] = fwd_hooks
        self.data.meta["hook_params"] = hook_params

    def _hook_modules(self, fn, path, out):
        """Parameters of the modules a forward hook closes over (`lambda m, i, o: o + self.up(...)`)."""
        fn = getattr(fn, "__func__", fn)
        mods = []
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, nn.Module):
            mods.append(owner)
        for c in getattr(fn, "__closure__", None) or ():
            try:
                v = c.cell_contents
            except ValueError:
                continue
            if isinstance(v, nn.Module):
                mods.append(v)
        for mod in mods:
            base = self._mod_path.get(mod)
            prefix = base if base else type(mod).__name__.lower()
            for pn, p in mod.named_parameters():
                tid = self._tid(p, link=False)
                info = self.tensors[tid]
                if info.name is None:
                    info.name = f"{prefix}.{pn}"
                out[str(tid)] = {"owner": path, "hook": getattr(fn, "__qualname__", "")[:200]}

    def _partly_iterated(self, box, path, called, skipped):
        """A ModuleList/ModuleDict (iterated, never called) of which only some children ran: the loop in its
        owner's forward that goes over part of it (`for blk in self.blocks[:-1]`, a zip with a shorter list)."""
        kids = [(f"{path}.{c}", ch) for c, ch in box.named_children()]
        ran = [k for k, _ in kids if k in called]
        if not ran or len(ran) == len(kids):
            return
        owner_path, _, attr = path.rpartition(".")
        owner = next((m for m, p in self._mod_path.items() if p == owner_path), None)
        fr = _frames.loop_over_attr(owner, attr) if owner is not None else None
        if fr is None:
            return
        for k, _ in kids:
            if k not in called:
                skipped[k] = {"parent": owner_path, "return_line": fr.to_json(), "loop": path,
                              "ran": len(ran), "of": len(kids)}

    def _refresh_alive(self):
        tens = self.tensors
        for tid, r in self._refs.items():
            info = tens.get(tid)
            if info is not None:
                info.alive = r() is not None

    def _tref(self, r, tens):
        if isinstance(r, TensorRef):
            return r
        tid, rg, leaf, ver = _tid_of(r), bool(r & 2), bool(r & 1), _ver(r)
        info = tens.get(tid)
        key = (info.shape, info.dtype, info.device) if info is not None else ((), "?", "?")
        meta = self._metas.setdefault(key, key)  # identical (shape, dtype, device) share one tuple
        return TensorRef(tid, requires_grad=rg, is_leaf=leaf, version=ver, meta=meta)

    def live(self, tid):
        r = self._refs.get(tid)
        return r() if r is not None else None

    def record_exception(self, exc):
        self.exception = exc
        site = None
        tb = exc.__traceback__
        raw = []
        while tb is not None:
            co = tb.tb_frame.f_code
            if _frames.category(co) == _frames.USER:
                raw.append((id(co), tb.tb_lineno))
            tb = tb.tb_next
        if raw:
            site = _frames.make_site(tuple(reversed(raw)))
        self.data.exception = ExceptionInfo(type(exc).__name__, str(exc)[:4000], self._error_event, site)


_PROBES = 2000  # in-place writes per graph checked against saved tensors (see Recorder._saved_info)
_FAST_PATH: dict = {}  # module type -> has an attention fast path that any TorchFunctionMode turns off


def _fast_path_note(labels):
    return (f"attention fast path off: {', '.join(labels)} ran in eval mode without autograd, where PyTorch takes "
            "a fused fast path only when no TorchFunctionMode is active; the recording is one, so they ran their "
            "reference path instead (outputs at padded positions can differ, NestedTensor inputs raise). Trace the "
            "training step, not inference")


_CUSTOM_BW: dict = {}  # node type -> Frame of its custom backward's return (or None)
_NODE_NAMES: dict = {}  # node type -> node.name()
_ACCUMULATE = "torch::autograd::AccumulateGrad"
# norm-preserving single-edge nodes: a gradient goes through them unchanged up to layout
_PASS_THROUGH = frozenset([
    "TBackward0", "ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0", "PermuteBackward0",
    "TransposeBackward0", "TransposeBackward1", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2",
    "SqueezeBackward3", "SqueezeBackward4", "UnsqueezeBackward0", "AliasBackward0", "CloneBackward0",
    "SelectBackward0", "SliceBackward0", "ViewAsRealBackward0", "ViewAsComplexBackward0",
])
# how each graph node is watched during one backward call
_M_LEAF, _M_LEAF_SEEN, _M_PASS, _M_NODE, _M_HOOK, _M_SKIP, _M_LOST = range(7)


_MUST_HOOK: dict = {}  # node type -> bool


def _must_hook(tp, nm) -> bool:
    """Nodes whose own hook is always wanted: custom Function backwards, module backward hooks and
    compiled regions (the diagnosis looks at exactly what they sent)."""
    r = _MUST_HOOK.get(tp)
    if r is None:
        r = getattr(tp, "_forward_cls", None) is not None or "BackwardHook" in nm or "CompiledFunction" in nm
        if tp.__name__ in nm:  # (a type per node kind)
            _MUST_HOOK[tp] = r
    return r


_BIG = 16384  # gradients with more elements count against the budget below
# Big gradients kept per backward call until it ends (beyond: measured at once). Small: holding
# big buffers longer than autograd would makes the CPU allocator hand out fresh pages every step.
_HOLD_BYTES = 1 << 20


def _node_post(state, nid, gi, go):
    """The post hook on one node for one backward call (bound with functools.partial): note that
    it ran and keep what it sent and received until backward ends. Their norms are only needed if a
    leaf ends up zero or non-finite, so usually they are never computed. Big gradients are kept
    within a memory budget (_HOLD_BYTES per backward call) and measured at once beyond it; one sent
    straight into a hook-free leaf is not kept (its accumulated .grad is measured afterwards, and
    holding it would make AccumulateGrad copy it)."""
    got = state[0]
    if nid in state[5]:
        gi = tuple(g if g is None or isinstance(g, float) else _norm(g) for g in gi)
    for g in gi:
        if g is not None and not isinstance(g, float) and g.numel() > _BIG:
            gi = _keep_big(state, nid, gi, True)
            break
    if state[4][nid]:
        for g in go:
            if g is not None and g.numel() > _BIG:
                go = _keep_big(state, nid, go, False)
                break
    else:
        go = ()
    got.append((nid, _held(gi), _held(go) if go else go))
    if len(got) % 256 == 0:  # bound the memory held: measure what is kept so far
        _edge_norms(got, True, in_place=True)
    return None


def _held(grads):
    """What a hook keeps of the gradients it saw until backward ends: detached aliases (same memory, their
    own tensor objects). Holding the gradient tensors themselves would raise their reference count, and
    AccumulateGrad steals a buffer into a leaf's .grad only while nothing else references it: it would
    copy instead (one more gradient-sized allocation per leaf, and a .grad in other memory)."""
    try:
        if _stack_len() or _dispatch_len():  # (a user's mode below the recorder's stashed one, or a dispatch mode)
            with _Own():
                return tuple([g.detach() if type(g) is _T or isinstance(g, _T) else g for g in grads])
        return tuple([g.detach() if type(g) is _T or isinstance(g, _T) else g for g in grads])
    except Exception:  # (a gradient that cannot be detached here, e.g. a batched one under vmap: kept as is)
        return grads


def _keep_big(state, nid, grads, sent):
    raw_nodes, refs = state[1], state[2]
    nxt = raw_nodes[nid][2]
    outs = []
    for j, g in enumerate(grads):
        if g is None or isinstance(g, float):
            outs.append(g)
            continue
        n = g.numel()
        if n <= _BIG:
            outs.append(g)
            continue
        if sent:
            c = nxt[j] if j < len(nxt) else None
            leaf = raw_nodes[c][3] if c is not None and c < len(raw_nodes) else None
            if leaf is not None:
                var = refs[leaf]() if leaf in refs else None
                if var is not None and not var._backward_hooks:
                    outs.append(PRESENT)
                    continue
        nb = n * g.element_size()
        if state[3] + nb <= _HOLD_BYTES:
            state[3] += nb
            outs.append(g)
        else:
            outs.append(_norm(g))
    return tuple(outs)


def _edge_norms(got, need, in_place=False):
    """(nid, sent, received) entries -> {nid: (sent norms, received norms)}. Without ``need``:
    PRESENT for every gradient (not worth measuring when every leaf got a healthy gradient)."""
    if need:
        pending = []  # (list, index, grad): one foreach call for all of them
        rows = []
        for nid, gi, go in got:
            a, b = list(gi), list(go)
            for lst in (a, b):
                for j, g in enumerate(lst):
                    if isinstance(g, _T):
                        pending.append((lst, j, g))
            rows.append((nid, a, b))
        _flush_norms(pending)
        if in_place:
            got[:] = [(nid, tuple(a), tuple(b)) for nid, a, b in rows]
            return None
        return {nid: (tuple(a), tuple(b)) for nid, a, b in rows}
    out = {}
    for nid, gi, go in got:
        out[nid] = (tuple(None if g is None else (g if type(g) is float else PRESENT) for g in gi),
                    tuple(None if g is None else (g if type(g) is float else PRESENT) for g in go))
    return out


def _build_backward(rec, raw_nodes, seen, leaf_val, note):
    """BackwardNode objects from the walk's lists and what the hooks saw (``seen``: nid -> (sent,
    received) norms). Un-hooked nodes get what they sent from the receiving end of each edge."""
    nodes = rec.nodes

    def received(c, k, depth=0):  # what node c got on its input k (c has only that input edge)
        rc = raw_nodes[c]
        m = rc[5]
        if m == _M_HOOK:
            d = seen.get(c)
            if d is None:
                return None  # it never ran: nothing reached it
            return d[1][k] if k < len(d[1]) else None
        if m == _M_LEAF_SEEN:
            return leaf_val.get(rc[3])
        if m == _M_PASS and depth < 64 and rc[2][0] is not None:
            return received(rc[2][0], rc[6][0], depth + 1)
        return PRESENT

    sent: dict = {}  # nid -> tuple of what it sent along each edge (for nodes that ran)
    for nid, rn in enumerate(raw_nodes):
        m = rn[5]
        if m == _M_HOOK:
            d = seen.get(nid)
            if d is not None:
                sent[nid] = d[0]
        elif m == _M_SKIP:
            sent[nid] = tuple(None if c is None else received(c, rn[6][j]) for j, c in enumerate(rn[2]))
    # pass-through nodes (and nodes whose hook could not be set) send on what their parents sent them
    parents: dict = {}
    for nid, rn in enumerate(raw_nodes):
        for j, c in enumerate(rn[2]):
            if c is not None:
                parents.setdefault(c, []).append((nid, j))
    changed = True
    while changed:  # the rest, from their parents (a few rounds at most)
        changed = False
        for nid, rn in enumerate(raw_nodes):
            if rn[5] in (_M_PASS, _M_LOST) and nid not in sent:
                vals = [sent[p][j] for p, j in parents.get(nid, ()) if p in sent and j < len(sent[p])]
                got = [v for v in vals if v is not None]
                if got or (vals and len(vals) == len(parents.get(nid, ()))):
                    v = (got[0] if len(got) == 1 else PRESENT) if got else None
                    sent[nid] = (v,) * max(len(rn[2]), 1) if rn[5] == _M_LOST else (v,)
                    changed = True
    # incoming gradient per node; a node that is not hooked ran when something reached it
    incoming: dict = {}
    for nid, outs in sent.items():
        for j, c in enumerate(raw_nodes[nid][2]):
            if c is not None:
                incoming.setdefault(c, []).append(outs[j] if j < len(outs) else None)
    ran = list(seen)  # hooked ones, in the order they ran
    roots = set(rec.root_nodes)
    for nid, rn in enumerate(raw_nodes):
        if rn[5] != _M_HOOK and nid in sent and rn[3] is None:
            if nid in roots or any(v is not None for v in incoming.get(nid, ())):
                ran.append(nid)
    ran_set = set(ran)
    for nid, (nm, ev_i, nxt, leaf, tp, mode, _) in enumerate(raw_nodes):
        cb = _CUSTOM_BW.get(tp, _MISSING)
        if cb is _MISSING:
            fwd = getattr(tp, "_forward_cls", None)
            bwf = getattr(fwd, "backward", None) if fwd is not None else None
            while bwf is not None and hasattr(bwf, "__wrapped__"):  # @once_differentiable, user decorators
                bwf = bwf.__wrapped__
            fr = _frames.return_lines(bwf) if bwf is not None else None
            cb = _CUSTOM_BW[tp] = None if fr is None or fr.filename.startswith(_frames.TORCH_DIR) else fr
        if "CompiledFunction" in nm and not rec.compiled:
            rec.compiled = True
            note("a torch.compile'd region ran: gradscope cannot see the source lines inside it; which "
                 "parameters got gradients is decided from the gradients that actually arrived")
        r = nid in ran_set
        nodes[nid] = BackwardNode(nid, nm, ev_i, tuple(nxt), r, sent.get(nid, ()) if r else (), leaf, cb)
    for nid, vals in incoming.items():  # a leaf ran when a gradient was sent to it
        n = nodes.get(nid)
        if n is not None and n.leaf is not None and any(v is not None for v in vals) and \
                any(p in ran_set for p, _ in parents.get(nid, ())):
            n.ran = True
    for n in nodes.values():
        if n.leaf is not None and n.nid in incoming:
            vals = [v for p_j, v in zip(parents.get(n.nid, ()), incoming[n.nid])
                    if v is not None and p_j[0] in ran_set]
            if vals and all(v == PRESENT for v in vals):  # not measured: the accumulated .grad's norm
                rec.arrived[n.leaf] = leaf_val.get(n.leaf) if leaf_val.get(n.leaf) is not None else PRESENT
            else:
                rec.arrived[n.leaf] = math.sqrt(sum(v * v for v in vals if v != PRESENT)) if vals else None
    # first node that produced a non-finite gradient from finite input (in the order nodes ran)
    for nid in ran:
        n = nodes[nid]
        if any(v is not None and not math.isfinite(v) for v in n.out_norms):
            inc = [v for p_j, v in zip(parents.get(nid, ()), incoming.get(nid, [])) if p_j[0] in ran_set]
            if all(v is None or math.isfinite(v) for v in inc):
                rec.first_nonfinite = nid
                break


_MISSING = object()


def _flush_norms(pending):
    """Fill in gradient norms for (list, index, grad) entries with one foreach call, then forget the grads."""
    if not pending:
        return
    items = list(pending)
    pending.clear()
    try:
        with _Own():
            gs = [g.detach() for _, _, g in items]
            if any(g.is_sparse or not (g.is_floating_point() or g.is_complex()) for g in gs):
                raise TypeError("mixed")
            vals = torch.stack([v.float() for v in torch._foreach_norm(gs)]).tolist()
    except Exception:
        vals = [_norm(g) for _, _, g in items]
    for (outs, j, _), v in zip(items, vals):
        outs[j] = v


def _norm(g):
    if g is None:
        return None
    try:
        with _Own():
            return float(torch.linalg.vector_norm(g.detach().float()))
    except Exception:
        return None


_frames.mark_internal(
    Recorder.__torch_function__.__code__, Recorder._pre.__code__, Recorder._post.__code__,
    Recorder._grad_mode.__code__, Recorder._backward.__code__, Recorder._backward_pre.__code__,
    Recorder._record.__code__, Recorder._other_call.__code__,
)
