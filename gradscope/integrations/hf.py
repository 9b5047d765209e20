"""A Hugging Face ``TrainerCallback`` that watches gradient flow for the whole ``Trainer.train``.

    from gradscope.integrations.hf import GradscopeTrainerCallback
    trainer = Trainer(model, args, train_dataset=ds, callbacks=[GradscopeTrainerCallback()])

Alerts are logged (``transformers`` logger, warning level) as they happen, with the explanation
from a full trace of the next step, and kept in ``callback.alerts``. The Trainer has no hook for
an exception raised during training: when ``train()`` raises, call ``callback.stop()`` (or use the
callback as a context manager around ``trainer.train()``) so its hooks are removed.
"""
from __future__ import annotations

from transformers import TrainerCallback
from transformers.utils import logging

from ..watch.watching import Watch

__all__ = ["GradscopeTrainerCallback"]

_log = logging.get_logger("gradscope")


class GradscopeTrainerCallback(TrainerCallback):
    """Watch the Trainer's model over ``train``; see :func:`gradscope.watch` for the options."""

    def __init__(self, *, log=None, never_after: int = 3, unchanged_after: int = 3, trace_on_alert: bool = True):
        from ..watch.rules import WatchConfig

        self._opts = dict(log=log, config=WatchConfig(never_after=never_after, unchanged_after=unchanged_after),
                          trace_on_alert=trace_on_alert)
        self.watch: Watch | None = None

    @property
    def alerts(self) -> list:
        return self.watch.alerts if self.watch else []

    def _on_alert(self, alert) -> None:
        if alert.explanation is not None or not self._opts["trace_on_alert"] or alert.kind == "unchanged":
            _log.warning(f"gradscope: {alert}")

    def on_train_begin(self, args, state, control, model=None, optimizer=None, **kwargs):
        self.watch = Watch(model, optimizer, on_alert=self._on_alert, **self._opts)
        self.watch.start()

    def on_train_end(self, args, state, control, **kwargs):
        self.stop()

    def stop(self) -> None:
        if self.watch is not None:
            self.watch.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False
