"""What the mode does with each torch function: skipped property reads, special calls (detach,
conversions, re-wraps, hooks, ...), in-place writes; decided once per function (``_classify``).
Also the small helpers that pick tensors out of call arguments.
"""
from __future__ import annotations


import torch
import torch.nn as nn
from torch.overrides import resolve_name

from ._quiet import _without_bump

from ..core.model import strip_torch_prefix
from ._compat import PRIVATE_TENSOR_METHODS, PRIVATE_TENSOR_PROPS, set_grad_enabled as _SET_GRAD, tensor_getsets
from ._frames import (
    F_APPLY, F_BACKWARD, F_CHECKPOINT, F_CLIP, F_COMPILE, F_DATA, F_DIST, F_FUNCTORCH, F_GENERATED, F_INIT, F_OPTIM,
    F_SETUP,
)


_T = torch.Tensor


_P = nn.Parameter
_is_compiling = torch.compiler.is_compiling


# --- what the mode skips or classifies --------------------------------------------------------
_PROPS = {"shape", "dtype", "device", "grad", "requires_grad", "is_sparse", "grad_fn", "is_leaf",
          "layout", "ndim", "is_cuda", "is_nested", "is_quantized", "is_meta", "output_nr", "retains_grad", "is_cpu",
          "itemsize", "nbytes", "is_mps", "is_xpu", "is_mkldnn", "is_sparse_csr", "names", *PRIVATE_TENSOR_PROPS}


_TENSOR_PROPS = {"H", "T", "mH", "mT", "real", "imag", "data"}  # reads that make a tensor: recorded


_SKIP = frozenset([getattr(_T, n).__get__ for n in _PROPS if hasattr(_T, n)] + [
    getattr(_T, n) for n in ("dim", "size", "numel", "stride", "data_ptr", "storage_offset", "is_contiguous",
                             "is_floating_point", "is_complex", *PRIVATE_TENSOR_METHODS, "element_size", "nelement", "get_device",
                             "untyped_storage", "__len__", "__repr__", "__format__", "__hash__", "__reduce_ex__",
                             "__deepcopy__", "is_inference", "__contains__", "has_names", "is_shared", "is_pinned")
    if hasattr(_T, n)] + [
    # Every other attribute read that yields no tensor, and every write of a private one
    # (`t._backward_hooks = None`): PyTorch performs these itself, some while holding a tensor's
    # autograd lock (rebasing a view marked dirty), and reading is_leaf there would deadlock.
    d.__get__ if m == "get" else d.__set__
    for n, d in tensor_getsets()
    for m in ("get", "set")
    if (m == "get" and n not in _TENSOR_PROPS) or (m == "set" and n.startswith("_"))] + [
    # load_state_dict's step before torch.utils.swap_tensors: its result is swapped at once, and
    # swap_tensors refuses a tensor with a weak reference (ours, had it been recorded)
    getattr(_T, n) for n in ("module_load",) if hasattr(_T, n)])


# Of those, the calls that can raise a warning: PyTorch's Python-level ones (warnings.warn with a
# stacklevel, e.g. __len__ under torch.jit.trace) and the getters that warn in C++ (a non-leaf's .grad,
# .volatile). They leave _SKIP and pass through from the caller's line (_C_PASS, _C_GRAD_GET: see
# _trampoline._caller), so their warnings have their plain location and registry; the other reads stay
# one C call.
_WARNS = frozenset([f for f in _SKIP if hasattr(f, "__code__")]
                   + [getattr(_T, n).__get__ for n in ("grad", "volatile") if hasattr(_T, n)])
_SKIP = _SKIP - _WARNS


_DETACH = {_T.detach: "detach", _T.detach_: "detach", _T.data.__get__: "data", torch.detach: "detach"}  # (torch.detach(x) too)


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


# they read only the shape (or dtype) of their second argument: it is not an input (no value, no gradient)
_SHAPE_OF_OTHER = {_T.view_as, _T.expand_as, _T.reshape_as, _T.type_as}


_HOOK_REG = {_T.register_hook}


_POST_ACC_HOOK = getattr(_T, "register_post_accumulate_grad_hook", None)


if _POST_ACC_HOOK is not None:
    _HOOK_REG.add(_POST_ACC_HOOK)


_RETAIN = {_T.retain_grad}


_GRAD_SET = _T.grad.__set__


_GRAD_GET = _T.grad.__get__


_DATA_SET = _T.data.__set__


_SETITEM = _T.__setitem__

#: calls that fill in a constant: a non-finite one there is where inf/nan entered the forward (see _values)
_FILLS = {torch.full, torch.full_like, _T.fill_, _T.masked_fill, _T.masked_fill_, _T.new_full, _T.index_fill,
          _T.index_fill_, torch.nn.functional.pad, _T.__setitem__, torch.where, torch.nan_to_num}


_SPECIAL = {**{f: "detach" for f in _DETACH}, **{f: "convert" for f in _CONVERT},
            **{f: "rewrap" for f in _REWRAP}, **{f: "requires_grad" for f in _REQ}, _GRAD_SET: "grad_set",
            **{f: "hook" for f in _HOOK_REG}, **{f: "retain" for f in _RETAIN}}


_NOT_INPLACE = {"requires_grad_", "retain_grad", "share_memory_", "record_stream", "register_hook", "__setstate__",
                "detach_", "set_", "pin_memory", "uniform_", "normal_"}


_NAMES: dict = {}


def _prime_overrides():
    """torch.overrides.resolve_name (how ops are named) wraps its work in catch_warnings: a registry
    reset per call (see _quiet). Its tables are built here once, with the version bump set aside;
    later calls go round the wrapper (_resolve_name)."""
    try:
        _without_bump(resolve_name, torch.add)
    except (AttributeError, TypeError, KeyError, RuntimeError):  # (naming then falls back per call)
        pass


_prime_overrides()
_resolve_name = getattr(resolve_name, "__wrapped__", resolve_name)  # (a lookup in the table built above)
# torch.mm and torch.spmm are one builtin (equal, one hash: one entry here) that torch.overrides names
# "torch.spmm": named by the common name, whichever spelling runs first
_NAMES[torch.mm] = "torch.mm"


def _name(func) -> str:
    n = _NAMES.get(func)
    if n is None:
        try:
            n = _resolve_name(func)
        except (AttributeError, TypeError, KeyError):  # (a callable torch.overrides cannot name)
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


_ZERO_GRAD_DETAIL = {"value": None, "zero_grad": True}  # shared, read-only


_CTX_FLAGS = (F_APPLY | F_BACKWARD | F_CHECKPOINT | F_CLIP | F_COMPILE | F_DATA | F_FUNCTORCH | F_GENERATED | F_INIT
              | F_OPTIM | F_SETUP | F_DIST)


_NO_DETAIL: dict = {}


_DTYPES: dict = {}


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


def context_of(flags, grad_on) -> str:
    """The region a call ran in, from the flags of its frame walk."""
    if flags & F_OPTIM:
        return "optimizer"
    if flags & F_SETUP:
        return "setup"
    if flags & F_CHECKPOINT:
        return "checkpoint"
    if flags & F_DIST:  # (FSDP's own code runs under dynamo's disable wrappers: before "compiled")
        return "distributed"
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
