"""How ops, cuts, shapes and gradient statuses read in the diagram (``detach()``,
``linear under no_grad``, ``grad None``)."""
from __future__ import annotations

import re
from typing import Iterable

from ..core.model import Event, fmt_norm


# Event kinds drawn as op nodes (others are ignored or summarised).
_NODE_KINDS = frozenset({"op", "cut", "inplace", "requires_grad", "external", "hook"})


_PROBLEM_STATUSES = frozenset({"none", "zero", "nonfinite"})


_DUNDER = {
    "__getitem__": "getitem", "__setitem__": "setitem", "__add__": "add", "__radd__": "add",
    "__iadd__": "add_", "__sub__": "sub", "__rsub__": "rsub", "__isub__": "sub_", "__mul__": "mul",
    "__rmul__": "mul", "__imul__": "mul_", "__matmul__": "matmul", "__rmatmul__": "matmul",
    "__truediv__": "div", "__rtruediv__": "rdiv", "__itruediv__": "div_", "__floordiv__": "floordiv",
    "__pow__": "pow", "__rpow__": "rpow", "__neg__": "neg", "__abs__": "abs", "__array__": "np.asarray",
    "__float__": "float", "__int__": "int", "__bool__": "bool", "__index__": "index", "__format__": "format",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__eq__": "eq", "__ne__": "ne",
    "__and__": "and", "__or__": "or", "__invert__": "invert", "__mod__": "mod",
}


def op_short(op: str) -> str:
    """``torch.nn.functional.linear`` -> ``linear``; ``torch.Tensor.data.__get__`` -> ``.data``."""
    parts = [p for p in re.split(r"[.:]", op or "") if p]
    if not parts:
        return op or "?"
    last = parts[-1]
    if last in ("__get__", "__set__") and len(parts) >= 2:
        return f".{parts[-2]}" + (" =" if last == "__set__" else "")
    return _DUNDER.get(last, last)


def _is_method(op: str) -> bool:
    return op.startswith(("torch.Tensor.", "Tensor.", "torch._C.TensorBase.", "torch._tensor."))


_SHAPE_ONLY_OPS = {"ones_like", "zeros_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
                   "new_zeros", "new_ones", "new_empty", "new_full", "size", "dim", "numel"}


def cut_label(e: Event) -> str:
    """How a cut reads in the diagram: ``detach()``, ``numpy()``, ``.data``, ``linear under no_grad``."""
    short = op_short(e.op)
    if e.detail.outputs_of is not None:  # the integer outputs of max(dim)/topk/sort
        return f"{short}() indices"
    if e.cut in ("data", "data_set") and short in ("data", ".data", ".data ="):
        return ".data" if e.cut == "data" else ".data ="
    if e.cut in ("no_grad", "inference_mode") and short not in ("detach",):
        return f"{short} under {e.cut}"
    if short.startswith(".") or short.startswith("np."):
        return short
    if _is_method(e.op) or e.cut in ("detach", "numpy", "item", "tolist", "data"):
        return f"{short}()"
    if e.op.startswith("torch.") and short in ("tensor", "as_tensor"):
        return f"torch.{short}()"
    return short


def _op_title(e: Event) -> str:
    short = op_short(e.op)
    if e.kind == "cut":
        return cut_label(e)
    if e.kind == "inplace":
        return f"{short} (in-place)"
    if e.kind == "external":
        return short if short not in ("external", "?") else "from outside torch"
    if e.kind == "hook":
        return f"{short} (hook)"
    return short


def _short_code(code: str, needle: str = "", limit: int = 44) -> str:
    """One line of source, at most ``limit`` characters, showing ``needle`` when it is there.

    Elided text is marked ``...`` (ASCII: every Graphviz and font measures it)."""
    code = re.sub(r"\s{2,}#.*$", "", (code or "").strip())  # drop a trailing comment
    code = " ".join(code.split())
    if len(code) <= limit:
        return code
    at = code.find(needle) if needle else -1
    if at < 0 or at + len(needle) <= limit - 3:
        return code[: limit - 3] + "..."
    start = max(0, min(at - (limit - len(needle)) // 2, len(code) - (limit - 3)))
    end = start + limit - 6 if start + limit - 3 < len(code) else len(code)
    return "..." + code[start + 3:end] + ("..." if end < len(code) else "")


def _fmt_shape(shape: Iterable) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


_fmt_norm = fmt_norm


_STATUS_TEXT = {
    "received": "grad ok",
    "none": "grad None",
    "zero": "grad zero",
    "nonfinite": "grad inf/nan",
    "frozen": "frozen",
    "not_run": "no backward",
    "untrained": "not trained",
    "cancelled": "grad 0 (uses cancel)",
}


def _param_status(t, status_by_tid: dict, after_backward: bool) -> tuple:
    """(status, norm, cause) for a parameter: the summary's row first, then TensorInfo.grad
    (None after a backward ran means no gradient arrived)."""
    ps = status_by_tid.get(t.tid)
    if ps is not None:
        if not ps.trainable and ps.status in ("none", "zero", "not_run"):
            # the summary's verdict: no optimizer trains it (a target network), so no gradient is no problem
            return "untrained", None, ps.cause
        if ps.status == "zero" and ps.cause == "gradient_cancelled":  # the loss's own exact zero: not a problem
            return "cancelled", ps.norm, ps.cause
        return ps.status, ps.norm, ps.cause
    if not t.requires_grad:
        return "frozen", None, None
    if t.grad is not None:
        return t.grad.status, t.grad.norm, None
    return ("none" if after_backward else None), None, None


def _module_parent(path: str) -> str | None:
    i = path.rfind(".")
    return path[:i] if i > 0 else None


def _mdepth(path: str | None) -> int:
    return len(path.split(".")) if path else 0


_STATUS_STYLES = frozenset({"param_received", "param_none", "param_zero", "param_nonfinite", "param_frozen",
                            "param_untrained"})


_BAD_STYLES = frozenset({"param_none", "param_zero", "param_nonfinite"})
