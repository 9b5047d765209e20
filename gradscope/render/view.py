"""The diagram as plain data: :class:`GraphView` with its nodes, edges and clusters."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..errors import DotNotFoundError, GradscopeError
from . import backend
from .backend import RENDER_FORMATS, SOURCE_FORMATS, _write_text
from .style import DOT_INSTALL_HINT


@dataclass(slots=True)
class GNode:
    """One box or ellipse of the diagram.

    ``kind``: ``"op"``, ``"cut"``, ``"inplace"``, ``"external"``, ``"param"``, ``"input"``,
    ``"tensor"``, ``"root"``, ``"module"`` (a collapsed module), ``"optimizer"``,
    ``"exception"`` or ``"hidden"``. ``style`` names the look (see ``_NODE_STYLES``),
    ``title`` is the first (bold) line and ``lines`` the rest.
    """

    id: str
    kind: str
    title: str
    lines: tuple = ()
    style: str = "op"
    cluster: str | None = None
    event: int | None = None  # the (first) event this node stands for
    tid: int | None = None  # the tensor, for tensor nodes
    n_ops: int = 0  # ops this node stands for (collapsed modules, folded blocks, hidden)
    mark: str = ""  # "focus" for the tensor graph(focus=...) was asked about

    @property
    def label(self) -> str:
        return "\n".join((self.title, *self.lines))


@dataclass(slots=True)
class GEdge:
    """One arrow. ``kind``: ``"autograd"`` (gradient flows back along it), ``"data"``
    (values only; nothing here needs a gradient), ``"cut"`` (values flow but autograd does
    not follow: the gradient stops here), ``"benign_cut"`` (a cut the diagnosis judged
    harmless, e.g. ``loss.item()`` for logging), ``"inferred"`` (a link gradscope inferred,
    e.g. values through NumPy), ``"root"`` (into the backward root) or ``"order"``
    (layout only: backward, then the optimizer step) or ``"raised"`` (to the exception the
    traced block raised)."""

    src: str
    dst: str
    kind: str
    label: str = ""
    tid: int | None = None


@dataclass(slots=True)
class GCluster:
    """A box around nodes: a module (``"module"``), folded repeated blocks (``"repeat"``)
    or a grad-disabled region (``"nograd"``)."""

    id: str
    label: str
    kind: str = "module"
    parent: str | None = None
    module: str | None = None


@dataclass
class GraphView:
    """A diagram of a traced step as plain data, ready for DOT.

    Build one with :func:`build_graph` (or ``tr.graph()``). ``source`` is the DOT text,
    :meth:`render` writes ``.svg``/``.png``/``.pdf``/``.dot``, and Jupyter displays it
    inline as SVG.
    """

    nodes: list = field(default_factory=list)  # GNode, in a stable order (ids n0, n1, ...)
    edges: list = field(default_factory=list)  # GEdge
    clusters: list = field(default_factory=list)  # GCluster (parents before children)
    hidden: int = 0  # ops not drawn (max_nodes), shown as one "N ops hidden" node
    title: str = ""
    legend: list = field(default_factory=list)  # (sample style, text) pairs
    collapsed: bool = False
    depth: int | None = None  # module depth collapsed to, if any
    folded: list = field(default_factory=list)  # labels of folded repeated blocks
    focus: int | None = None
    notes: list = field(default_factory=list)
    rows: list = field(default_factory=list)  # [[node id, ...]]: chains drawn left to right, one row each

    # --- queries -------------------------------------------------------------------
    def node(self, node_id: str) -> GNode:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def find(self, text: str) -> list:
        """Nodes whose label contains ``text``."""
        return [n for n in self.nodes if text in n.label]

    def edges_of(self, kind: str) -> list:
        return [e for e in self.edges if e.kind == kind]

    def __repr__(self) -> str:
        cuts = len(self.edges_of("cut"))
        return (f"<GraphView {len(self.nodes)} nodes, {len(self.edges)} edges, {cuts} cut"
                f"{'s' if cuts != 1 else ''}, {self.hidden} ops hidden>")

    def __str__(self) -> str:
        return self.describe()

    def describe(self) -> str:
        """A few lines of plain text: what the diagram shows (used as Jupyter's text/plain)."""
        lines = [self.title or "gradscope graph"]
        lines.append(f"{len(self.nodes)} nodes, {len(self.edges)} edges"
                     + (f", {self.hidden} ops hidden" if self.hidden else "")
                     + (f", collapsed to module depth {self.depth}" if self.depth else "")
                     + (", repeated blocks folded: " + ", ".join(self.folded) if self.folded else ""))
        for e in self.edges:
            if e.kind == "cut":
                lines.append(f"  cut: {e.label}")
        for n in self.nodes:
            if n.kind == "param" and n.style in ("param_none", "param_zero", "param_nonfinite"):
                lines.append(f"  {n.title}: {n.lines[-1] if n.lines else ''}")
            elif n.kind == "module" and n.style == "module_bad":  # a box of starved parameters
                lines.append(f"  {n.title}: {n.lines[-1] if n.lines else ''}")
        lines.extend(f"  note: {t}" for t in self.notes)
        return "\n".join(lines)

    # --- DOT ---------------------------------------------------------------------------
    def to_dot(self):
        """The diagram as a ``graphviz.Digraph`` (needs the ``graphviz`` Python package)."""
        from .dot import to_digraph  # noqa: PLC0415  (graphviz is imported lazily)

        return to_digraph(self)

    @property
    def source(self) -> str:
        """The DOT text (deterministic: stable ids n0, n1, ... in event order)."""
        return self.to_dot().source

    def render(self, path: str | os.PathLike) -> str:
        """Write the diagram to ``path``; the format comes from the extension.

        ``.dot``/``.gv`` write the DOT source (no Graphviz needed); ``.svg``, ``.png``,
        ``.pdf`` and ``.jpg`` run Graphviz's ``dot``. Returns the path written.

        Raises:
            DotNotFoundError: ``dot`` is not installed. The DOT source is then written
                next to ``path`` (same name, ``.dot``) and the message says where.
        """
        p = os.fspath(path)
        ext = os.path.splitext(p)[1].lower().lstrip(".")
        if ext in SOURCE_FORMATS:
            _write_text(p, self.source)
            return p
        if ext not in RENDER_FORMATS:
            raise GradscopeError(
                f"cannot render {p}: unknown extension {('.' + ext) if ext else '(none)'} "
                f"(must be one of {', '.join('.' + f for f in RENDER_FORMATS + SOURCE_FORMATS)})")
        fmt = "jpeg" if ext == "jpg" else ext
        data = self._pipe(fmt, p)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def _pipe(self, fmt: str, path: str | None = None) -> bytes:
        return backend.pipe(self.to_dot(), fmt, path)


    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        text = self.describe()
        try:
            svg = self._pipe("svg").decode("utf-8")
        except DotNotFoundError:
            return {"text/plain": text + "\n\n(no diagram: Graphviz's `dot` program is not installed; "
                    + DOT_INSTALL_HINT + ". DOT source:)\n" + self.source}
        except GradscopeError as e:  # graphviz Python package missing, or dot failed
            return {"text/plain": f"{text}\n\n(no diagram: {e})"}
        return {"image/svg+xml": svg, "text/plain": text}
