"""The hooks behind ``gradscope.watch`` (the watch's logic, its steps, snapshots and alerts, is in
``gradscope.watch._watcher``): the recorder's global hooks, kept while the watch may start a trace; the
global optimizer step pre/post hooks; a post-accumulate-grad hook per watched parameter; a global
module forward pre hook while the models are being found; the ``requires_grad`` write listener
(``_flags``). And ``quiet()``, the watch's own arithmetic set apart from autograd and every mode.

``WatchHooks`` holds every handle and removes them all in ``stop()``.
"""
from __future__ import annotations

import torch
from torch.nn.modules import module as _M
from torch.optim import optimizer as _O

from . import _compat, _flags
from ._hooks import _install_globals, _remove_globals


class WatchHooks:
    """Installs the watch's hooks and removes them: ``start`` (optimizer step hooks, the requires_grad
    listener, the recorder's global hooks when a trace may start), ``watch_param`` (a parameter's
    gradient arrival), ``discover`` (module calls, to find the models), ``stop``."""

    def __init__(self):
        self._params: list = []  # post-accumulate-grad hook handles
        self._global: list = []  # optimizer step hook handles
        self._fwd = None  # the module forward pre hook's handle (while discovering)
        self._listener = None  # (watches, written): the requires_grad listener
        self._recorder_globals = False
        self.errors: list = []  # the watch's own failures in an optimizer hook (kept, never raised)

    def start(self, *, opt_pre, opt_post, recorder_globals: bool) -> None:
        """``opt_pre(opt, args, kwargs)`` / ``opt_post(...)`` around every optimizer step; ``recorder_globals``:
        install the recorder's global hooks now (before the watch's own: the recorder's post hook runs first at
        each step), since a trace started inside an optimizer hook must not register hooks there."""
        if recorder_globals:
            _install_globals()
            self._recorder_globals = True
        self._global += [_O.register_optimizer_step_pre_hook(self._guarded(opt_pre)),
                         _O.register_optimizer_step_post_hook(self._guarded(opt_post))]

    def _guarded(self, hook):
        """``hook`` for an optimizer step: a failure of the watch's own is kept in ``errors``, never raised into the
        user's ``step()``."""
        errors = self.errors

        def guarded(opt, args, kwargs):
            try:
                return hook(opt, args, kwargs)
            except Exception as e:  # (the watch's failure must not stop the user's training)
                if len(errors) < 16:
                    errors.append(f"{type(e).__name__}: {e}")
                return None

        return guarded

    def listen(self, watches, written) -> None:
        """``written(p, value, frame)`` for each requires_grad write on a parameter ``watches(p)`` accepts: the
        line that changes it (no per-step cost)."""
        _flags.add_listener(watches, written)
        self._listener = (watches, written)

    def watch_param(self, p, arrived) -> None:
        """``arrived(p)`` runs each time a gradient is accumulated into ``p.grad``."""
        self._params.append(p.register_post_accumulate_grad_hook(arrived))

    def discover(self, on: bool, forward_pre=None) -> None:
        """``forward_pre(module, args)`` before every module call (on), or no more (off)."""
        if on and self._fwd is None:
            self._fwd = _M.register_module_forward_pre_hook(forward_pre)
        elif not on and self._fwd is not None:
            self._fwd.remove()
            self._fwd = None

    def stop(self) -> None:
        """Every hook removed (the recorder's global hooks last)."""
        for h in self._params + self._global:
            h.remove()
        self._params.clear()
        self._global.clear()
        self.discover(False)
        if self._listener is not None:
            watches, written = self._listener
            self._listener = None
            _flags.remove_listener(watches, written)
        if self._recorder_globals:
            self._recorder_globals = False
            _remove_globals()


class quiet:
    """The watch's own tensor arithmetic: outside autograd, and invisible to the user's function and
    dispatch modes (a user's TorchDispatchMode must not see gradscope's ops)."""

    __slots__ = ("_cms",)

    def __enter__(self):
        cms = [torch.no_grad(), _compat.disable_torch_function()]
        if _compat.dispatch_stack_len():
            cms.append(_compat.disable_dispatch_modes())
        for cm in cms:
            cm.__enter__()
        self._cms = cms
        return self

    def __exit__(self, *exc):
        for cm in reversed(self._cms):
            cm.__exit__(None, None, None)
        return False
