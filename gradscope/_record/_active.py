"""Which recorders are active in this thread; the dispatch from a global hook to them; taking them off
the mode stack for an optimizer step's duration.
"""
from __future__ import annotations

import sys
import threading

from ._compat import (
    disable_torch_function as _NO_TF, function_stack_at as _stack_at, function_stack_len as _stack_len,
    jit_tracing_state as _jit_tracing, pop_function_mode,
)
from ._ops import _is_compiling

_local = threading.local()



def _active():
    return getattr(_local, "stack", ())


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
            if r.calls.on:
                try:  # (Recorder._guard, written out: module hooks run twice per module call)
                    with _NO_TF():
                        getattr(r, method)(*call)
                except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
                    r._internal(e)
            elif leave and r._leave_pending:
                r._leave()
        return None

    hook.__name__ = f"gradscope{method}"
    return hook


def _suspend_for_step():
    active = _active()
    for r in active:  # a recording that ended: off the mode stack for good (its hooks go at the next module call:
        if r._leave_pending:  # the optimizer runs its hooks from the live registry, which must not change now)
            r._off_stack()
    while True:
        n = _stack_len()
        top = _stack_at(n - 1) if n else None
        r = next((r for r in active if r.mode is top), None) if top is not None else None
        if r is None or not (r.calls.in_opt or r.optim.closure) or r._suspended:
            break
        pop_function_mode()
        r._suspended = True
