"""Per-thread active recorders, the shared global module/optimizer hooks that forward to them,
and taking recorders off the mode stack for an optimizer step's duration.
"""
from __future__ import annotations

import sys
import threading


from ._compat import disable_torch_function as _NO_TF, function_stack_len as _stack_len, function_stack_at as _stack_at
from ._ops import _is_compiling
from ._compat import pop_function_mode


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

        from ._optim import _on_optimizer_step, _on_optimizer_step_done

        import warnings

        # our global hooks make torch.compile(module) warn; tracing must not change what the user sees
        warnings.filterwarnings("ignore", message=_COMPILE_HOOK_WARNING)
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
        if _is_compiling():  # Dynamo inlines global hooks: keep them out of the compiled graph
            return None
        call = args[:nargs] + (sys._getframe(1),) if with_frame else args[:nargs]
        for r in getattr(_local, "stack", ()):
            if r._on:
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


_on_module_pre = _dispatch("_module_pre", 1, with_frame=True, leave=True)  # (module, args)


_on_module_post = _dispatch("_module_post", 3, with_frame=True)  # (module, args, output)


_on_module_registered = _dispatch("_module_registered", 3)  # (module, name, submodule)


_on_param_registered = _dispatch("_param_registered", 3)  # (module, name, param)


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
        pop_function_mode()
        top._suspended = True
