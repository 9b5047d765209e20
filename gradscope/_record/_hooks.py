"""The global module and optimizer hooks gradscope installs while any recorder is active (shared by
all of them, reference-counted) and the module hooks' dispatch to the active recorders.
"""
from __future__ import annotations

import re
import threading

from torch.nn.modules import module as M
from torch.optim import optimizer as O


from . import _dtensor
from ._active import _dispatch
from ._optim import _on_optimizer_step, _on_optimizer_step_done


_global_lock = threading.Lock()


_global_users = 0


_global_handles: list = []


_COMPILE_HOOK_WARNING = r"Using `torch.compile\(module\)` when there are global hooks"


class _WarningFilter:
    """Removes the warnings filter installed with the global hooks (a 'handle' like the others)."""

    def remove(self):
        import warnings

        # (in place and without a version bump, as it was added: see _quiet)
        warnings.filters[:] = [f for f in warnings.filters
                               if not (f[0] == "ignore" and getattr(f[1], "pattern", None) == _COMPILE_HOOK_WARNING)]


def _install_globals():
    global _global_users
    with _global_lock:
        _global_users += 1
        if _global_users > 1:
            return

        import warnings

        # our global hooks make torch.compile(module) warn; tracing must not change what the user sees.
        # Inserted as filterwarnings would, but without its version bump (that would make every warning
        # already shown once per location show again: see _quiet)
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
        _dtensor.remove()  # (wrapped when a model was first called with DTensor imported: see _dtensor)


_on_module_pre = _dispatch("_module_pre", 1, with_frame=True, leave=True)  # (module, args)


_on_module_post = _dispatch("_module_post", 3, with_frame=True)  # (module, args, output)


_on_module_registered = _dispatch("_module_registered", 3)  # (module, name, submodule)


_on_param_registered = _dispatch("_param_registered", 3)  # (module, name, param)


