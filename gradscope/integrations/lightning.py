"""A PyTorch Lightning callback that watches gradient flow for the whole ``Trainer.fit``.

    from gradscope.integrations.lightning import GradscopeCallback
    trainer = Trainer(callbacks=[GradscopeCallback(log="run.watch.jsonl")])

Alerts (a parameter that stops getting gradients, never gets one, gets a non-finite one, or
does not change at ``optimizer.step()``) are raised as warnings on rank 0 as they happen, with
the explanation from a full trace of the next step, and kept in ``callback.alerts``. With
``log_grad_norms=True`` each module's gradient norm is logged to the trainer's loggers
(``grad_norm/<module>`` and ``grad_norm/total``): per module rather than per parameter, the
tracking users asked for after Lightning 2.0 removed ``track_grad_norm`` (whose per-parameter
logs cluttered the loggers).
"""
from __future__ import annotations

import math

try:
    import lightning.pytorch as pl
    from lightning.pytorch.utilities import rank_zero_warn
except ImportError:  # the older package name
    import pytorch_lightning as pl
    from pytorch_lightning.utilities import rank_zero_warn

from ..watch.watching import Watch

__all__ = ["GradscopeCallback"]


class GradscopeCallback(pl.Callback):
    """Watch the LightningModule's parameters over ``fit``; see :func:`gradscope.watch` for the options."""

    def __init__(self, *, log=None, never_after: int = 3, unchanged_after: int = 3, trace_on_alert: bool = True,
                 log_grad_norms: bool = False, warn: bool = True):
        from ..watch.rules import WatchConfig

        self._opts = dict(log=log, config=WatchConfig(never_after=never_after, unchanged_after=unchanged_after),
                          trace_on_alert=trace_on_alert)
        self.log_grad_norms = log_grad_norms
        self.warn = warn
        self.watch: Watch | None = None

    @property
    def alerts(self) -> list:
        return self.watch.alerts if self.watch else []

    def _on_alert(self, alert) -> None:
        if self.warn and (alert.explanation is not None or not self._opts["trace_on_alert"] or alert.kind == "unchanged"):
            rank_zero_warn(f"gradscope: {alert}")

    def on_fit_start(self, trainer, pl_module) -> None:
        self.watch = Watch(pl_module, list(trainer.optimizers), on_alert=self._on_alert, **self._opts)
        self.watch.start()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if not self.log_grad_norms or self.watch is None:
            return
        sums: dict = {}
        for name, h in self.watch.history.items():
            recent = h.recent()
            if recent and recent[-1].received and recent[-1].norm is not None:
                mod = name.rsplit(".", 1)[0] if "." in name else name
                sums[mod] = sums.get(mod, 0.0) + recent[-1].norm ** 2
        if sums:  # one value per module (not per parameter: no clutter), and the total
            norms = {f"grad_norm/{m}": math.sqrt(v) for m, v in sums.items()}
            norms["grad_norm/total"] = math.sqrt(sum(sums.values()))
            pl_module.log_dict(norms, on_step=True, on_epoch=False)

    def _stop(self) -> None:
        if self.watch is not None:
            self.watch.stop()

    def on_fit_end(self, trainer, pl_module) -> None:
        self._stop()

    def on_exception(self, trainer, pl_module, exception) -> None:
        self._stop()
