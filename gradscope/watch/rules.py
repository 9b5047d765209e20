"""The watch's triggers: small pure functions over one parameter's history, in one registry.

Each trigger looks at a :class:`~gradscope.watch.log.ParamHistory` after a step and returns a
short reason when it fires (or None). The watch groups parameters that fired the same trigger
in the same step into one alert. Registering two triggers under one name is an error.

>>> from gradscope.watch.log import ParamHistory
>>> h = ParamHistory("head.weight")
>>> for s in range(3):
...     _ = h.add(s, received=s < 2, norm=0.5 if s < 2 else None, finite=True, changed=True)
>>> [kind for kind, check in TRIGGERS.items() if check(h, 2, WatchConfig())]
['stopped']
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TRIGGERS", "WatchConfig", "trigger", "ALERT_TEXT"]


@dataclass(frozen=True)
class WatchConfig:
    """When the triggers fire."""

    never_after: int = 3  # a trainable parameter with no gradient in this many steps from its first
    unchanged_after: int = 3  # a parameter with a gradient that did not change at this many step() calls


TRIGGERS: dict = {}

#: how an alert of each kind reads, for one parameter or many ({params}, {n}, {extra})
ALERT_TEXT = {
    "stopped": "{params} stopped receiving gradients{extra}",
    "never": "{params} received no gradient in {n} steps",
    "nonfinite": "first non-finite gradient in {params}{extra}",
    "unchanged": "{params} received gradients but did not change at optimizer.step() for {n} steps{extra}",
}


def trigger(kind: str):
    """Register ``fn(history, step, config) -> bool`` as the trigger ``kind``."""

    def register(fn):
        if kind in TRIGGERS:
            raise RuntimeError(f"gradscope: a watch trigger named {kind!r} is already registered "
                               f"({TRIGGERS[kind].__qualname__})")
        if kind not in ALERT_TEXT:
            raise RuntimeError(f"gradscope: watch trigger {kind!r} has no alert text in ALERT_TEXT")
        TRIGGERS[kind] = fn
        return fn

    return register


@trigger("stopped")
def _stopped(h, step, cfg) -> bool:
    """It received gradients before, and this is the first step without one."""
    return h.missing_run == 1 and h.n_received > 0


@trigger("never")
def _never(h, step, cfg) -> bool:
    """It never received a gradient, for ``never_after`` steps since it was first watched."""
    return h.n_received == 0 and h.first_step is not None and step - h.first_step + 1 == cfg.never_after


@trigger("nonfinite")
def _nonfinite(h, step, cfg) -> bool:
    """Its first non-finite gradient (inf or nan) arrived in this step."""
    return h.first_nonfinite == step


@trigger("unchanged")
def _unchanged(h, step, cfg) -> bool:
    """It received a gradient at each of the last ``unchanged_after`` optimizer steps and never changed."""
    return h.unchanged_run == cfg.unchanged_after
