"""Name tensors after the user's variables, from the source line that assigned them. Pure.

>>> from gradscope.core.model import Event, Site, TensorInfo, TensorRef, TraceData
>>> s = Site("t.py", 3, "f", "h = torch.relu(x @ w)")
>>> d = TraceData(events=[Event(0, "op", "torch.matmul", s, (), (TensorRef(1),)),
...                       Event(1, "op", "torch.relu", s, (TensorRef(1),), (TensorRef(2),))],
...               tensors={1: TensorInfo(1, (2,), "float32", "cpu", True, False, 0),
...                        2: TensorInfo(2, (2,), "float32", "cpu", True, False, 1)})
>>> infer_names(d); d.tensors[2].name, d.tensors[1].name
('h', None)
"""
from __future__ import annotations

import re

from .model import TraceData

__all__ = ["infer_names"]

_ASSIGN = re.compile(r"^\s*((?:self\.)?[A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")
_NAMING_KINDS = ("op", "cut", "external", "inplace", "module")


def infer_names(data: TraceData) -> None:
    """Give unnamed tensors the variable name their line assigns (``h = ...`` names the last
    result computed on that line). Parameters keep their module names."""
    ev = data.events
    n = len(ev)
    for i, e in enumerate(ev):
        if e.kind not in _NAMING_KINDS or e.site is None or not e.site.code or len(e.outputs) != 1:
            continue
        nxt = ev[i + 1] if i + 1 < n else None
        if nxt is not None and nxt.site is e.site and nxt.kind in _NAMING_KINDS:
            continue  # not the last call on this line
        if nxt is not None and nxt.site is not None and len(nxt.site.stack) > len(e.site.stack) \
                and nxt.site.stack[:len(e.site.stack)] == e.site.stack:
            continue  # `loss = f(model(x))`: a function called next from this line makes the assigned value
        m = _ASSIGN.match(e.site.code)
        if not m:
            continue
        t = data.tensors.get(e.outputs[0].tid)
        if t is not None and t.name is None and (t.producer == e.index or e.kind == "module"):
            t.name = m.group(1)
