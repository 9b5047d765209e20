"""Calling a traced function "from the user's line", so that warnings raised inside it are
attributed, filtered and deduplicated as without the trace.
"""
from __future__ import annotations

import sys


from . import _frames
from ._compat import HANDLE_TORCH_FUNCTION_CODE as _HTF_CODE
from ._ops import _tensors


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
    except (ValueError, TypeError):  # (a code layout this Python does not accept: carets stay)
        pass


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
    except (TypeError, ValueError, AttributeError):  # (an odd code object or globals: called plainly)
        return _direct
    _frames.mark_internal(code)  # never a site of its own
    if len(_TRAMPS) > 50_000:
        _TRAMPS.clear()
    _TRAMPS[key] = (co, fn)  # (keeps the code object, so its id is not reused)
    return fn
