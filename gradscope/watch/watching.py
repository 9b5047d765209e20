"""The public facade of the watch: :func:`gradscope.watch` over a whole training run.

>>> import torch, gradscope
>>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
>>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
>>> with gradscope.watch(model, opt) as w:
...     for step in range(5):
...         if step == 2:                           # a freeze that was not meant to happen
...             _ = model[0].requires_grad_(False)
...         loss = model(torch.randn(8, 4)).pow(2).mean()
...         loss.backward()
...         opt.step()
...         opt.zero_grad()
>>> a = w.alerts[0]
>>> a.kind, a.step, a.params
('stopped', 2, ['0.weight', '0.bias'])
>>> a.changes
['0.weight.requires_grad True -> False', '0.bias.requires_grad True -> False']
>>> f = a.frozen_at[0]                              # the line that froze them, seen by the watch
>>> f["params"], f["step"], f["site"]["code"]
(['0.weight', '0.bias'], 2, '_ = model[0].requires_grad_(False)')
>>> a.explanation["cause"], a.explanation["site"]["lineno"] == f["site"]["lineno"]
('frozen_param', True)
"""
from __future__ import annotations

import sys
import weakref

from .log import Alert, Timeline, read_log
from .rules import WatchConfig

__all__ = ["watch", "Watch", "Alert", "read_log", "Timeline"]


def watch(model=None, optimizer=None, *, log=None, never_after: int = 3, unchanged_after: int = 3,
          trace_on_alert: bool = True, on_alert=None, on_step=None, window: int = 64) -> Watch:
    """Watch gradient flow over many training steps, cheaply, and explain the step where it breaks.

    ``model``: a module or a list of modules (their trainable parameters are watched, named by
    module path); ``optimizer``: one or a list (a step is one call of the first one's ``step()``);
    neither: the models and optimizers used while watching are found by themselves.
    Per step it records which parameters received a gradient, its norm, non-finite values and
    whether ``step()`` changed the parameter (``window`` steps of history per parameter; memory
    does not grow with the run). An alert is raised when a parameter stops receiving gradients,
    never received one in ``never_after`` steps, gets its first non-finite gradient, or received
    gradients but did not change at ``unchanged_after`` optimizer steps. With ``trace_on_alert``
    the next step is traced fully (:func:`gradscope.trace`) and the alert carries its explanation.
    ``log``: a path for the JSON-lines log (``gradscope show`` reads it); ``on_alert(alert)`` is
    called for each alert, and again when its explanation is ready; ``on_step(step, n_alerts)`` after
    each step.
    """
    return Watch(model, optimizer, log=log, _frame=sys._getframe(1), config=WatchConfig(never_after=never_after,
                                                               unchanged_after=unchanged_after),
                 trace_on_alert=trace_on_alert, on_alert=on_alert, on_step=on_step, window=window)


def _as_list(x) -> list:
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _variables(objs, frame) -> list:
    """The caller's variable for each object (``watch([policy, target])`` -> policy, target), else
    ``model0``, ``model1``..."""
    scope = {**frame.f_globals, **frame.f_locals} if frame is not None else {}
    out = []
    for i, o in enumerate(objs):
        name = next((k for k, v in scope.items() if v is o and not k.startswith("_")), None)
        out.append(name if name and name not in out else f"model{i}")
    return out


class Watch:
    """A running (or finished) watch. Use as a context manager, or ``start()`` / ``stop()``."""

    def __init__(self, model=None, optimizer=None, *, log=None, config: WatchConfig | None = None,
                 trace_on_alert: bool = True, on_alert=None, window: int = 64, on_step=None, _frame=None):
        models = _as_list(model)
        # several models: each parameter's name starts with the caller's variable for its model
        prefixes = _variables(models, _frame or sys._getframe(1)) if len(models) > 1 else [""] * len(models)
        # weak: a watch kept after the run must not keep the model (and its gradients) alive
        self._args = dict(models=[weakref.ref(m) for m in models], prefixes=prefixes,
                          optimizers=[weakref.ref(o) for o in _as_list(optimizer)], log_path=log,
                          config=config or WatchConfig(), trace_on_alert=trace_on_alert, on_alert=on_alert,
                          window=window, on_step=on_step)
        self._w = None

    def start(self) -> Watch:
        from ._watcher import Watcher  # torch is needed to watch, not to read a log
        from ..trace import Trace

        if self._w is not None and self._w._on:
            from ..errors import GradscopeError

            raise GradscopeError("this watch is already running; use a new gradscope.watch() for another run")
        a = self._args
        models = [m for m in (r() for r in a["models"]) if m is not None]
        opts = [o for o in (r() for r in a["optimizers"]) if o is not None]
        self._w = Watcher(models, opts, prefixes=a["prefixes"], make_trace=lambda: Trace(steps=1),
                          on_step=a["on_step"], config=a["config"], log_path=a["log_path"], window=a["window"],
                          trace_on_alert=a["trace_on_alert"], on_alert=a["on_alert"])
        self._w.start()
        return self

    def stop(self) -> None:
        if self._w is not None:
            self._w.stop()

    def __enter__(self) -> Watch:
        return self.start()

    def __exit__(self, et, ev, tb):
        self.stop()
        return False

    def step(self) -> None:
        """End a step by hand (for loops without an optimizer, or several backward calls per step)."""
        if self._w is not None and self._w._on:
            self._w.finish_step(changed=False)

    @property
    def alerts(self) -> list:
        """Every alert raised so far, in order (:class:`gradscope.watch.log.Alert`)."""
        return list(self._w.alerts) if self._w else []

    @property
    def steps(self) -> int:
        return self._w.step if self._w else 0

    @property
    def history(self) -> dict:
        """Parameter name -> its :class:`~gradscope.watch.log.ParamHistory` (the last steps)."""
        return dict(self._w.log.history) if self._w and self._w.log else {}

    @property
    def log_path(self) -> str | None:
        """Where this process's log is written (in a multi-process run, with its rank in the name)."""
        return self._w.log.path if self._w and self._w.log else None

    @property
    def last_trace(self):
        """The full trace of the last step traced after an alert (a :class:`gradscope.Trace`), or None."""
        return getattr(self._w, "last_trace", None)

    def summary(self) -> str:
        """A few lines: steps watched, parameters, and each alert."""
        if not self._w:
            return "gradscope.watch: not started"
        n = len(self._w.log.names)
        head = f"gradscope.watch: {_count(self.steps, 'step')}, {_count(n, 'parameter')} watched, " \
               f"{_count(len(self.alerts), 'alert')}"
        errs = self._w.errors
        tail = [f"gradscope.watch could not measure some steps ({len(errs)} error(s) of its own, the first: {errs[0]})"
                ] if errs else []
        return "\n".join([head] + [str(a) for a in self.alerts] + tail)

    def __repr__(self) -> str:
        state = "running" if self._w and self._w._on else ("stopped" if self._w else "not started")
        return f"<gradscope.Watch {state}: {_count(self.steps, 'step')}, {_count(len(self.alerts), 'alert')}>"



def _count(n: int, word: str) -> str:
    """``1 alert``, ``2 alerts``."""
    return f"{n} {word}{'' if n == 1 else 's'}"
