"""The diagram of a traced step: :class:`GraphView` (plain data) and :func:`build_graph`.

This module is the public face of :mod:`gradscope.render`, split along its seams: building
the full drawing (``render.full``, ``render.labels``), folding and collapsing it
(``render.fold``, ``render.clusters``, ``render.build``), the view as data (``render.view``),
its DOT text (``render.dot``, ``render.style``) and the backend that alone runs Graphviz
(``render.backend``).

Layer: render. Reads the data model (:mod:`gradscope.core.model`) and the diagnosis' plain
results (:mod:`gradscope.core.explanation`); never imports torch. ``graphviz`` (the Python
package) is imported lazily by :meth:`GraphView.to_dot` and friends, and the Graphviz
``dot`` program is only needed to rasterise (``.svg``/``.png``/``.pdf``): ``.source`` and
``.dot`` files work without it.

What the diagram shows (the legend in each diagram says the same):

* rounded boxes are recorded ops (``linear``, ``detach()``), each with the user's line
  (``model.py:25``); ellipses are tensors that matter: parameters (with name, shape and,
  after backward, their gradient), inputs, and the backward root (double border);
* solid edges are autograd edges; **red dashed edges are data edges autograd does not
  follow**: the cut, labelled with what cut it and where (``detach() @ model.py:25``);
  dotted edges are links gradscope inferred (values that left torch and came back);
* grey fill / grey clusters: computed with gradient recording disabled; orange: in-place
  writes; parameters are green (received a gradient), red (None), orange (zero), purple
  (inf/nan) or grey (frozen);
* modules are clusters; big traces are collapsed (repeated blocks folded into one
  cluster ``blocks.0-11 (x12)``, modules below a depth drawn as single boxes, and an honest
  ``N ops hidden`` node past ``max_nodes``), but the harmful cuts and the paths through
  them stay visible.

>>> from gradscope.core.model import Event, Site, TensorInfo, TensorRef, TraceData
>>> r = lambda tid, rg: TensorRef(tid, (3,), "float32", "cpu", rg, tid < 2)
>>> data = TraceData(
...     events=[Event(0, "op", "torch.Tensor.mul", Site("t.py", 2, "f", "y = x * 2"), (r(0, True),), (r(2, True),)),
...             Event(1, "cut", "torch.Tensor.detach", Site("t.py", 3, "f", "z = y.detach() * w"),
...                   (r(2, True),), (r(3, False),), cut="detach"),
...             Event(2, "op", "torch.Tensor.mul", Site("t.py", 3, "f", "z = y.detach() * w"),
...                   (r(3, False), r(1, True)), (r(4, True),))],
...     tensors={0: TensorInfo(0, (3,), "float32", "cpu", True, True, name="x"),
...              1: TensorInfo(1, (3,), "float32", "cpu", True, True, name="w")})
>>> g = build_graph(data)
>>> [e.label for e in g.edges if e.kind == "cut"]
['detach() @ t.py:3']
"""

from __future__ import annotations

from .render.backend import RENDER_FORMATS, SOURCE_FORMATS
from .render.build import build_graph
from .render.fold import SCREEN_NODES, SCREEN_RANKS
from .render.labels import cut_label, op_short
from .render.style import DOT_INSTALL_HINT, PALETTE
from .render.view import GCluster, GEdge, GNode, GraphView

__all__ = [
    "GraphView",
    "GNode",
    "GEdge",
    "GCluster",
    "build_graph",
    "PALETTE",
    "DOT_INSTALL_HINT",
    "SCREEN_NODES",
    "SCREEN_RANKS",
    "cut_label",
    "op_short",
    "RENDER_FORMATS",
    "SOURCE_FORMATS",
]
