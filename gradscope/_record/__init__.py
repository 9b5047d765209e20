"""The recording layer: the only code that touches torch modes and hooks (see ``_recorder``)."""
from __future__ import annotations

from ._graph import PRESENT
from ._hooks import _install_globals, _remove_globals
from ._norms import _grad_status
from ._recorder import Recorder

__all__ = ["PRESENT", "Recorder", "_grad_status", "_install_globals", "_remove_globals"]
