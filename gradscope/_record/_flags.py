"""The user's lines that change ``requires_grad`` on an ``nn.Parameter``, seen while a watch runs.

A watch has no TorchFunctionMode (its per-op cost breaks the watch's budget, and a mode turns off
PyTorch's attention fast path), so it cannot see ``p.requires_grad_(False)`` or
``p.requires_grad = False`` through one, and the next step's trace can only say that the parameter
"was frozen before the trace started". Instead, while at least one listener is installed,
``torch.nn.Parameter`` gets two class attributes that shadow ``torch._C.TensorBase``'s own:

- ``requires_grad``: a property whose getter *is* TensorBase's C getter (a read runs no Python
  code: the training step's reads cost what they did) and whose setter calls TensorBase's setter,
  then tells the listeners when the value changed;
- ``requires_grad_``: TensorBase's method (``Module.requires_grad_`` calls it per parameter), then
  the same.

Nothing runs per op or per step. ``type(p)`` is unchanged, and a TorchFunctionMode or tensor
subclass sees exactly the calls it saw before (TensorBase's code looks the functions up on
``torch.Tensor``, which is untouched; the before/after reads of the flag are made with torch
functions disabled). A write that leaves the flag as it was costs two flag reads. When the last
listener goes, both attributes are removed (whatever stood there before is restored). Writes that
do not go through ``nn.Parameter`` (a plain tensor leaf, ``torch.Tensor.requires_grad_(p, False)``
called on the class, C++ code) are not seen: the watch says so.
"""
from __future__ import annotations

import sys
import threading

import torch

from ._compat import disable_torch_function as _NO_TF, tensorbase_requires_grad_get, torch_function_mode_enabled

__all__ = ["add_listener", "remove_listener", "installed", "requires_grad", "seen_on"]

_P = torch.nn.Parameter
_NAMES = ("requires_grad", "requires_grad_")
_MISSING = object()

_lock = threading.Lock()
_listeners: list = []  # (wants(param) -> bool, told(param, value, the frame that made the write))
_state: dict = {}  # while installed: name -> (what Parameter's own __dict__ held, what we put there)
_mode_on = torch_function_mode_enabled
_compiling = torch.compiler.is_compiling


def _resolved(name):
    """What ``Parameter.<name>`` resolves to now (through the MRO), as a raw class attribute."""
    for k in _P.__mro__:
        if name in k.__dict__:
            return k.__dict__[name]
    raise AttributeError(name)


def _quiet_read(get, p):
    if type(p) is _P and not _mode_on():  # (nn.Parameter's own __torch_function__ is disabled)
        return get(p)
    with _NO_TF():  # our own read: no mode or subclass sees it
        return get(p)


_failed: dict = {}  # id(param) -> what went wrong recording its write (shown by the watch, not swallowed)


def _tell(p, value, f) -> None:
    for wants, told in tuple(_listeners):
        try:
            if wants(p):
                told(p, value, f)
                _failed.pop(id(p), None)
        except Exception as e:  # a listener never breaks the user's write: the failure is kept (failure_for)
            if len(_failed) < 256:
                _failed[id(p)] = f"{type(e).__name__}: {e}"


def failure_for(p) -> str | None:
    """Why the write that changed ``p.requires_grad`` could not be recorded, if it could not."""
    return _failed.get(id(p))


def _make(prop, method):
    get, set_, delete = prop.__get__, prop.__set__, prop.__delete__

    def _set(self, value):
        if not _listeners or _compiling():
            return set_(self, value)
        old = _quiet_read(get, self)
        set_(self, value)
        new = _quiet_read(get, self)
        if new != old:
            _tell(self, new, sys._getframe(1))
        return None

    def requires_grad_(self, *args, **kwargs):
        if not _listeners or _compiling():
            return method(self, *args, **kwargs)
        old = _quiet_read(get, self)
        out = method(self, *args, **kwargs)
        new = _quiet_read(get, self)
        if new != old:
            _tell(self, new, sys._getframe(1))
        return out

    requires_grad_.__doc__ = getattr(method, "__doc__", None)
    requires_grad_.__qualname__ = "Parameter.requires_grad_"
    return property(get, _set, delete, getattr(prop, "__doc__", None)), requires_grad_


def add_listener(wants, told) -> None:
    """After each write that changes an nn.Parameter's requires_grad, for which ``wants(param)`` is
    true, call ``told(param, value, frame)`` (``frame``: the one that made the write; it must not
    be kept)."""
    with _lock:
        if not _state:
            ours = _make(_resolved("requires_grad"), _resolved("requires_grad_"))
            for name, obj in zip(_NAMES, ours):
                _state[name] = (_P.__dict__.get(name, _MISSING), obj)
                setattr(_P, name, obj)
        _listeners.append((wants, told))


def remove_listener(wants, told) -> None:
    """Undo one add_listener(wants, told); the last one restores nn.Parameter's attributes."""
    with _lock:
        for i, x in enumerate(_listeners):
            if x == (wants, told):
                del _listeners[i]
                break
        if _listeners or not _state:
            return
        for name, (before, ours) in list(_state.items()):
            if _P.__dict__.get(name, _MISSING) is ours:  # (someone who replaced ours keeps theirs)
                if before is _MISSING:
                    delattr(_P, name)
                else:
                    setattr(_P, name, before)
        _state.clear()
        _failed.clear()


_BASE_GET = tensorbase_requires_grad_get


def requires_grad(p) -> bool:
    """``p.requires_grad``, read without any mode or subclass seeing the read."""
    return _quiet_read(_BASE_GET, p)


def installed() -> bool:
    return bool(_state)


def seen_on(p) -> bool:
    """Whether writes to ``p.requires_grad`` go through nn.Parameter's attributes (are seen here)."""
    return _P in type(p).__mro__ and not any("requires_grad" in k.__dict__ or "requires_grad_" in k.__dict__
                                             for k in type(p).__mro__[:type(p).__mro__.index(_P)])
