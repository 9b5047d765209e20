"""gradscope: find the line that cut your gradient flow.

>>> import torch, gradscope
>>> x = torch.randn(3, requires_grad=True)
>>> w = torch.ones(3, requires_grad=True)
>>> with gradscope.trace() as tr:
...     z = (x * 2).detach() * w
...     z.sum().backward()
>>> tr.why(x).cause
'detach'
"""
from __future__ import annotations

from .core.explanation import CAUSES, Explanation, ParamStatus, PathStep, StepSummary
from .errors import DotNotFoundError, GradscopeError, UnknownTargetError
from .core.model import Event, Frame, Site, TensorInfo, TraceData, TraceFileError
from .trace import Trace, load, trace
from .watch.watching import Watch, watch
from .render import report as _report  # noqa: F401  (registers how explanations draw themselves)

__version__ = "0.1.0"

__all__ = [
    "trace",
    "watch",
    "Watch",
    "load",
    "Trace",
    "Site",
    "Frame",
    "Event",
    "TensorInfo",
    "TraceData",
    "TraceFileError",
    "Explanation",
    "PathStep",
    "ParamStatus",
    "StepSummary",
    "CAUSES",
    "GradscopeError",
    "UnknownTargetError",
    "DotNotFoundError",
    "__version__",
]


def load_ipython_extension(ipython):  # pragma: no cover - exercised through notebooks
    """``%load_ext gradscope``: registers the ``%%gradscope`` cell magic."""
    from .ipython import load_ipython_extension as _load

    _load(ipython)
