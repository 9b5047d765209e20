"""DTensor's conversions made visible to the recording's mode: ``DTensor.to_local()``, ``.redistribute()``,
``.full_tensor()`` and ``DTensor.from_local()`` are Python methods that run an autograd Function no
TorchFunctionMode sees, so a
tensor-parallel module's output turned into a local tensor (``ColwiseParallel``'s output_fn) and a local tensor
turned back into a DTensor (``RowwiseParallel``'s input_fn) would cut the recorded flow in two.

While a recorder is active and ``torch.distributed.tensor`` has been imported (looked at when a model is first
called: :func:`ensure`), both are wrapped so that, when a torch-function mode is active, the call goes through
``handle_torch_function`` like any torch function (recorded with its inputs and outputs, in the "distributed"
context of torch's own code); otherwise the original runs, unchanged. Removed with the global hooks
(:func:`remove`), whatever stood there before put back. A user's own TorchFunctionMode active inside a trace sees
these calls too.
"""
from __future__ import annotations

import sys
import threading

from torch.overrides import handle_torch_function, has_torch_function

__all__ = ["ensure", "remove"]

_lock = threading.Lock()
_saved = None  # (DTensor, its own to_local, its own from_local) while wrapped


def ensure() -> None:
    """Wrap the conversions if DTensor is imported and they are not wrapped yet (cheap when they are)."""
    global _saved
    if _saved is not None:
        return
    mod = sys.modules.get("torch.distributed.tensor")
    cls = getattr(mod, "DTensor", None)
    if cls is None:
        return
    with _lock:
        if _saved is not None:
            return
        own = {n: cls.__dict__.get(n) for n in _METHODS}
        own_from = cls.__dict__.get("from_local")
        if not all(callable(f) for f in own.values()) or not isinstance(own_from, staticmethod):
            return  # (another layout: left as it is)
        from_fn = own_from.__func__
        wrapped = {n: _visible(n, f) for n, f in own.items()}

        def from_local(local_tensor, *args, **kwargs):
            if has_torch_function((local_tensor,)):
                return handle_torch_function(from_local, (local_tensor,), local_tensor, *args, **kwargs)
            return from_fn(local_tensor, *args, **kwargs)

        _name(from_local, "from_local")
        for n, f in wrapped.items():
            setattr(cls, n, f)
        cls.from_local = staticmethod(from_local)
        _saved = (cls, own, own_from)


_METHODS = ("to_local", "redistribute", "full_tensor")


def _name(fn, name):
    fn.__module__, fn.__name__, fn.__qualname__ = "torch.distributed.tensor", name, f"DTensor.{name}"
    return fn


def _visible(name, own):
    """DTensor method ``own`` (a conversion no mode sees), called through handle_torch_function under a mode."""
    def method(self, *args, **kwargs):
        if has_torch_function((self,)):
            return handle_torch_function(method, (self,), self, *args, **kwargs)
        return own(self, *args, **kwargs)

    return _name(method, name)


def remove() -> None:
    """Put DTensor's own conversions back (the last recorder stopped)."""
    global _saved
    with _lock:
        if _saved is None:
            return
        cls, own, own_from = _saved
        for n, f in own.items():
            setattr(cls, n, f)
        cls.from_local = own_from
        _saved = None
