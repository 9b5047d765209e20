"""gradscope's error types: each says what is wrong and what to do."""
from __future__ import annotations

from .core.model import TraceFileError

__all__ = ["GradscopeError", "UnknownTargetError", "TraceFileError", "DotNotFoundError"]


class GradscopeError(Exception):
    """Bad input to gradscope."""


class UnknownTargetError(GradscopeError, LookupError):
    """why()/focus= named a tensor the trace never saw."""


class DotNotFoundError(GradscopeError, RuntimeError):
    """The graphviz ``dot`` binary is not installed."""
