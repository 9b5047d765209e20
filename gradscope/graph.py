"""The diagram of a traced step: :class:`GraphView` (plain data) and :func:`build_graph`.

Layer: render. Reads the data model (:mod:`gradscope.model`) and the diagnosis' plain
results (:mod:`gradscope.explanation`); never imports torch. ``graphviz`` (the Python
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

>>> from gradscope.model import Event, Site, TensorInfo, TensorRef, TraceData
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

import bisect
import html
import os
import re
import textwrap
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import DotNotFoundError, GradscopeError, UnknownTargetError
from .model import Event, TraceData, fmt_norm

__all__ = [
    "DOT_INSTALL_HINT",
    "PALETTE",
    "GCluster",
    "GEdge",
    "GNode",
    "GraphView",
    "build_graph",
]

# --------------------------------------------------------------------------- palette
#: One palette for the diagram; :mod:`gradscope.report` uses the same colour names so
#: the terminal and the diagram agree (red = cut / no gradient, green = received, ...).
PALETTE = {
    "ink": "#333333",
    "muted": "#777777",
    "faint": "#b3b3b3",
    "cut": "#d62728",
    "cut_fill": "#fde0dd",
    "inplace": "#e6550d",
    "inplace_fill": "#fdd9b5",
    "nograd_fill": "#d9d9d9",
    "nograd_cluster": "#ededed",
    "received": "#238b45",
    "received_fill": "#c7e9c0",
    "none": "#cb181d",
    "none_fill": "#fcbba1",
    "zero": "#d94801",
    "zero_fill": "#fdd0a2",
    "nonfinite": "#6a51a3",
    "nonfinite_fill": "#dadaeb",
    "frozen": "#969696",
    "frozen_fill": "#f0f0f0",
    "root": "#2171b5",
    "root_fill": "#deebf7",
    "module_fill": "#f4f7fb",
    "module_border": "#6b7f99",
    "op_fill": "#ffffff",
}

DOT_INSTALL_HINT = (
    "install Graphviz: `apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) "
    "or `conda install -c conda-forge graphviz`"
)

# NOTE [graphviz-pure]
# PyPI's `graphviz-pure` (0.2.2: a Rust port of Graphviz 16.1, one static binary named
# `graphviz-pure`, 6 MB wheel, EPL-2.0, bundles its own fonts) was evaluated as an
# optional extra for machines without Graphviz. On our golden DOT files (HTML-like
# labels, nested clusters, dashed/dotted edges, peripheries) it wrote SVG and PNG with
# the same nodes, edges, clusters and styles as Debian's dot 2.43 and a comparable
# layout (siblings sometimes in the other order), in 0.1-0.2 s. Limits: no PDF (-Tpdf
# is "not recognized"), it warns on stderr about the width of non-ASCII glyphs (so
# labels elide with ASCII "..."), and it installs no `dot` command, so the graphviz
# Python package never finds it by itself. GraphView.render() / _repr_mimebundle_()
# therefore fall back to it for svg/png/jpg only when `dot` is missing and a
# `graphviz-pure` program is on PATH; `pip install graphviz-pure` is a fine optional
# extra (e.g. gradscope[diagram]) for pip-only environments such as Colab or Windows.

_RENDER_FORMATS = ("svg", "png", "pdf", "jpg", "jpeg")
_SOURCE_FORMATS = ("dot", "gv")

# Event kinds drawn as op nodes (others are ignored or summarised).
_NODE_KINDS = frozenset({"op", "cut", "inplace", "requires_grad", "external", "hook"})
_PROBLEM_STATUSES = frozenset({"none", "zero", "nonfinite"})


# --------------------------------------------------------------------------- data
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
        lines.extend(f"  note: {t}" for t in self.notes)
        return "\n".join(lines)

    # --- DOT ---------------------------------------------------------------------------
    def to_dot(self):
        """The diagram as a ``graphviz.Digraph`` (needs the ``graphviz`` Python package)."""
        graphviz = _import_graphviz()
        g = graphviz.Digraph(
            "gradscope",
            graph_attr={
                "rankdir": "TB",
                "fontname": "Helvetica",
                "fontsize": "12",
                "nodesep": "0.3",
                "ranksep": "0.35",
                "labelloc": "t",
                "labeljust": "l",
                "newrank": "true",
                "compound": "true",
                **({"label": _title_label(self.title)} if self.title else {}),
            },
            node_attr={"fontname": "Helvetica", "fontsize": "10", "margin": "0.12,0.04", "height": "0.3",
                       "color": PALETTE["ink"], "fontcolor": PALETTE["ink"]},
            edge_attr={"fontname": "Helvetica", "fontsize": "9", "arrowsize": "0.6", "color": PALETTE["ink"]},
        )
        by_cluster: dict = {}
        for n in self.nodes:
            by_cluster.setdefault(n.cluster, []).append(n)
        children: dict = {}
        for c in self.clusters:
            children.setdefault(c.parent, []).append(c)

        def emit(container, cluster_id):
            for n in by_cluster.get(cluster_id, ()):
                attrs = dict(_NODE_STYLES.get(n.style, {}))
                if n.mark == "focus":
                    attrs["penwidth"] = "3.5"
                container.node(n.id, _html_label(n), **attrs)
            for c in children.get(cluster_id, ()):
                with container.subgraph(name=c.id) as sub:
                    sub.attr(label=c.label, **_CLUSTER_STYLES[c.kind])
                    emit(sub, c.id)

        emit(g, None)
        for e in self.edges:
            attrs = dict(_EDGE_STYLES[e.kind])
            if e.label and e.kind == "cut":  # the cut and its line: bold, a little larger
                attrs["label"] = f'<<b> {_h(e.label)} </b>>'
                attrs["fontsize"] = "10"
            elif e.label:
                attrs["label"] = " " + e.label + " "
            g.edge(e.src, e.dst, **attrs)
        if self.legend:
            with g.subgraph(name="legend") as lg:
                lg.attr(rank="sink")
                lg.node("legend", _legend_label(self.legend), shape="plaintext", margin="0")
        return g

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
        if ext in _SOURCE_FORMATS:
            _write_text(p, self.source)
            return p
        if ext not in _RENDER_FORMATS:
            raise GradscopeError(
                f"cannot render {p}: unknown extension {('.' + ext) if ext else '(none)'} "
                f"(must be one of {', '.join('.' + f for f in _RENDER_FORMATS + _SOURCE_FORMATS)})")
        fmt = "jpeg" if ext == "jpg" else ext
        data = self._pipe(fmt, p)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def _pipe(self, fmt: str, path: str | None = None) -> bytes:
        graphviz = _import_graphviz()
        dot = self.to_dot()
        try:
            return dot.pipe(format=fmt)
        except graphviz.ExecutableNotFound:
            pass
        except graphviz.CalledProcessError as e:  # dot ran and failed: say what it said
            err = (e.stderr or b"").decode("utf-8", "replace").strip().splitlines()[-3:]
            raise GradscopeError(f"Graphviz `dot -T{fmt}` failed: {' '.join(err) or e}") from None
        alt = _graphviz_pure(fmt)
        if alt is not None:
            return _run_graphviz_pure(alt, fmt, dot.source)
        dot_path = None
        if path is not None:
            dot_path = os.path.splitext(path)[0] + ".dot"
            _write_text(dot_path, dot.source)
        raise DotNotFoundError(_dot_missing_message(path, dot_path, fmt))

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


def _write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _dot_missing_message(path: str | None, dot_path: str | None, fmt: str) -> str:
    what = f"cannot render {path}" if path else f"cannot draw the diagram as {fmt}"
    msg = (f"{what}: Graphviz's `dot` program is not installed (or not on PATH); {DOT_INSTALL_HINT}.")
    if dot_path:
        out = path or f"diagram.{fmt}"
        msg += (f" The diagram's source was written to {dot_path}; render it later with "
                f"`dot -T{fmt} {dot_path} -o {out}`.")
    return msg


def _import_graphviz():
    try:
        import graphviz
    except ImportError:
        raise GradscopeError(
            "drawing the graph needs the graphviz Python package: pip install graphviz "
            "(and the Graphviz `dot` program to render images: " + DOT_INSTALL_HINT + ")"
        ) from None
    return graphviz


def _graphviz_pure(fmt: str) -> str | None:
    """The `graphviz-pure` program, when installed and able to write ``fmt``; see NOTE [graphviz-pure]."""
    if fmt not in ("svg", "png", "jpeg"):
        return None
    import shutil

    return shutil.which("graphviz-pure")


def _run_graphviz_pure(exe: str, fmt: str, source: str) -> bytes:
    import subprocess

    proc = subprocess.run([exe, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True, timeout=120)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise GradscopeError(f"graphviz-pure -T{fmt} failed: {' '.join(err)}")
    return proc.stdout


# --------------------------------------------------------------------------- DOT styles
_P = PALETTE
_NODE_STYLES: dict = {
    "op": {"shape": "box", "style": "rounded,filled", "fillcolor": _P["op_fill"], "color": "#666666"},
    "nograd": {"shape": "box", "style": "rounded,filled", "fillcolor": _P["nograd_fill"], "color": "#8c8c8c"},
    "cut": {"shape": "box", "style": "rounded,filled,bold", "fillcolor": _P["cut_fill"], "color": _P["cut"],
            "fontcolor": "#a50f15", "penwidth": "2"},
    "cut_benign": {"shape": "box", "style": "rounded,filled,dashed", "fillcolor": "#f7f7f7", "color": "#999999"},
    "inplace": {"shape": "box", "style": "rounded,filled", "fillcolor": _P["inplace_fill"], "color": _P["inplace"],
                "penwidth": "1.5"},
    "inplace_bad": {"shape": "box", "style": "rounded,filled,bold", "fillcolor": _P["inplace_fill"],
                    "color": _P["cut"], "penwidth": "2"},
    "external": {"shape": "box", "style": "rounded,dashed", "color": "#666666"},
    "input": {"shape": "ellipse", "style": "filled", "fillcolor": "#ffffff", "color": "#666666"},
    "param": {"shape": "ellipse", "style": "filled", "fillcolor": "#ffffff", "color": "#666666"},
    "param_received": {"shape": "ellipse", "style": "filled", "fillcolor": _P["received_fill"],
                       "color": _P["received"]},
    "param_none": {"shape": "ellipse", "style": "filled,bold", "fillcolor": _P["none_fill"], "color": _P["none"],
                   "penwidth": "2.5"},
    "param_zero": {"shape": "ellipse", "style": "filled,bold", "fillcolor": _P["zero_fill"], "color": _P["zero"],
                   "penwidth": "2"},
    "param_nonfinite": {"shape": "ellipse", "style": "filled,bold", "fillcolor": _P["nonfinite_fill"],
                        "color": _P["nonfinite"], "penwidth": "2"},
    "param_frozen": {"shape": "ellipse", "style": "filled,dashed", "fillcolor": _P["frozen_fill"],
                     "color": _P["frozen"], "fontcolor": "#555555"},
    "root": {"shape": "ellipse", "style": "filled,bold", "peripheries": "2", "fillcolor": _P["root_fill"],
             "color": _P["root"]},
    "root_failed": {"shape": "ellipse", "style": "filled,bold", "peripheries": "2", "fillcolor": _P["none_fill"],
                    "color": _P["none"]},
    "module": {"shape": "box3d", "margin": "0.16,0.09", "style": "filled", "fillcolor": _P["module_fill"], "color": _P["module_border"]},
    "module_bad": {"shape": "box3d", "margin": "0.16,0.09", "style": "filled,bold", "fillcolor": _P["module_fill"], "color": _P["none"],
                   "penwidth": "2"},
    "module_nograd": {"shape": "box3d", "margin": "0.16,0.09", "style": "filled", "fillcolor": _P["nograd_fill"], "color": "#8c8c8c"},
    "optimizer": {"shape": "box", "style": "rounded,filled", "fillcolor": "#e5f5f9", "color": "#2c7fb8"},
    "exception": {"shape": "box", "style": "filled,bold", "fillcolor": _P["none_fill"], "color": _P["none"],
                  "penwidth": "2"},
    "hidden": {"shape": "box", "style": "dashed", "color": "#999999", "fontcolor": "#666666"},
}
_EDGE_STYLES: dict = {
    "autograd": {"color": _P["ink"], "penwidth": "1.2"},
    "data": {"color": _P["faint"]},
    "cut": {"color": _P["cut"], "style": "dashed", "penwidth": "2.2", "fontcolor": _P["cut"]},
    "benign_cut": {"color": "#999999", "style": "dashed", "fontcolor": "#777777"},
    "inferred": {"color": "#555555", "style": "dotted", "penwidth": "1.8", "fontcolor": "#555555"},
    "root": {"color": _P["root"], "penwidth": "1.8"},
    "order": {"style": "invis"},
    "raised": {"color": _P["none"], "style": "dotted", "penwidth": "2", "fontcolor": _P["none"]},
}
_CLUSTER_STYLES: dict = {
    "module": {"style": "rounded", "color": "#9aa9bd", "fontcolor": "#4a5a70", "fontsize": "10"},
    "repeat": {"style": "rounded,bold", "color": "#4a5a70", "fontcolor": "#2d3a4c", "fontsize": "11",
               "penwidth": "1.5"},
    "nograd": {"style": "rounded,filled", "color": "#aaaaaa", "fillcolor": _P["nograd_cluster"],
               "fontcolor": "#555555", "fontsize": "9"},
}

# What each legend entry's sample looks like: ("edge", text, colour) or ("box", fill, border).
_LEGEND_SAMPLES = {
    "cut": ("edge", "- - - &gt;", _P["cut"]),
    "benign_cut": ("edge", "- - - &gt;", "#999999"),
    "inferred": ("edge", "&#183; &#183; &#183; &gt;", "#555555"),
    "autograd": ("edge", "&#8212;&#8212;&gt;", _P["ink"]),
    "data": ("edge", "&#8212;&#8212;&gt;", _P["faint"]),
    "nograd": ("box", _P["nograd_fill"], "#8c8c8c"),
    "inplace": ("box", _P["inplace_fill"], _P["inplace"]),
    "root": ("box", _P["root_fill"], _P["root"]),
    "param_received": ("box", _P["received_fill"], _P["received"]),
    "param_none": ("box", _P["none_fill"], _P["none"]),
    "param_zero": ("box", _P["zero_fill"], _P["zero"]),
    "param_nonfinite": ("box", _P["nonfinite_fill"], _P["nonfinite"]),
    "param_frozen": ("box", _P["frozen_fill"], _P["frozen"]),
    "module": ("box", _P["module_fill"], _P["module_border"]),
    "repeat": ("box", "#ffffff", "#4a5a70"),
}


def _h(text: str) -> str:
    return html.escape(text, quote=True)


_STATUS_LINE_COLOR = {"param_none": _P["none"], "param_zero": _P["zero"], "param_nonfinite": _P["nonfinite"],
                      "param_received": _P["received"]}


def _html_label(n: GNode) -> str:
    parts = [f"<b>{_h(n.title)}</b>"]
    color = "#a50f15" if n.style == "cut" else "#555555"
    for i, line in enumerate(n.lines):
        c = color
        if n.kind == "param" and i >= 1 and n.style in _STATUS_LINE_COLOR:
            c = _STATUS_LINE_COLOR[n.style]  # the gradient line in the status colour
            line_html = f"<b>{_h(line)}</b>" if n.style != "param_received" else _h(line)
            parts.append(f'<font point-size="9" color="{c}">{line_html}</font>')
            continue
        parts.append(f'<font point-size="9" color="{c}">{_h(line)}</font>')
    return "<" + "<br/>".join(parts) + ">"


def _title_label(title: str) -> str:
    lines = title.split("\n")
    out = f"<b>{_h(lines[0])}</b>"
    for line in lines[1:]:
        out += f'<br align="left"/><font point-size="10">{_h(line)}</font>'
    return "<" + out + '<br align="left"/>>'


def _legend_label(entries: list) -> str:
    rows = ['<tr><td colspan="2" align="left"><font point-size="9" color="#555555"><b>legend</b></font></td></tr>']
    for key, text in entries:
        kind, a, b = _LEGEND_SAMPLES.get(key, ("box", "#ffffff", _P["ink"]))
        if kind == "edge":
            sample = f'<td align="center"><font point-size="9" color="{b}"><b>{a}</b></font></td>'
        else:
            sample = f'<td bgcolor="{a}" color="{b}" border="1" width="22" height="10" fixedsize="true"></td>'
        rows.append(f'<tr>{sample}<td align="left"><font point-size="9">{_h(text)}</font></td></tr>')
    return ('<<table border="0" cellborder="0" cellspacing="2" cellpadding="1">' + "".join(rows) + "</table>>")


# --------------------------------------------------------------------------- labels
_DUNDER = {
    "__getitem__": "getitem", "__setitem__": "setitem", "__add__": "add", "__radd__": "add",
    "__iadd__": "add_", "__sub__": "sub", "__rsub__": "rsub", "__isub__": "sub_", "__mul__": "mul",
    "__rmul__": "mul", "__imul__": "mul_", "__matmul__": "matmul", "__rmatmul__": "matmul",
    "__truediv__": "div", "__rtruediv__": "rdiv", "__itruediv__": "div_", "__floordiv__": "floordiv",
    "__pow__": "pow", "__rpow__": "rpow", "__neg__": "neg", "__abs__": "abs", "__array__": "np.asarray",
    "__float__": "float", "__int__": "int", "__bool__": "bool", "__index__": "index", "__format__": "format",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__eq__": "eq", "__ne__": "ne",
    "__and__": "and", "__or__": "or", "__invert__": "invert", "__mod__": "mod",
}


def op_short(op: str) -> str:
    """``torch.nn.functional.linear`` -> ``linear``; ``torch.Tensor.data.__get__`` -> ``.data``."""
    parts = [p for p in re.split(r"[.:]", op or "") if p]
    if not parts:
        return op or "?"
    last = parts[-1]
    if last in ("__get__", "__set__") and len(parts) >= 2:
        return f".{parts[-2]}" + (" =" if last == "__set__" else "")
    return _DUNDER.get(last, last)


def _is_method(op: str) -> bool:
    return op.startswith(("torch.Tensor.", "Tensor.", "torch._C.TensorBase.", "torch._tensor."))


_SHAPE_ONLY_OPS = {"ones_like", "zeros_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
                   "new_zeros", "new_ones", "new_empty", "new_full", "size", "dim", "numel"}


def cut_label(e: Event) -> str:
    """How a cut reads in the diagram: ``detach()``, ``numpy()``, ``.data``, ``linear under no_grad``."""
    short = op_short(e.op)
    if e.detail.get("outputs_of") is not None:  # the integer outputs of max(dim)/topk/sort
        return f"{short}() indices"
    if e.cut in ("data", "data_set") and short in ("data", ".data", ".data ="):
        return ".data" if e.cut == "data" else ".data ="
    if e.cut in ("no_grad", "inference_mode") and short not in ("detach",):
        return f"{short} under {e.cut}"
    if short.startswith(".") or short.startswith("np."):
        return short
    if _is_method(e.op) or e.cut in ("detach", "numpy", "item", "tolist", "data"):
        return f"{short}()"
    if e.op.startswith("torch.") and short in ("tensor", "as_tensor"):
        return f"torch.{short}()"
    return short


def _op_title(e: Event) -> str:
    short = op_short(e.op)
    if e.kind == "cut":
        return cut_label(e)
    if e.kind == "inplace":
        return f"{short} (in-place)"
    if e.kind == "external":
        return short if short not in ("external", "?") else "from outside torch"
    if e.kind == "hook":
        return f"{short} (hook)"
    return short


def _short_code(code: str, needle: str = "", limit: int = 44) -> str:
    """One line of source, at most ``limit`` characters, showing ``needle`` when it is there.

    Elided text is marked ``...`` (ASCII: every Graphviz and font measures it)."""
    code = re.sub(r"\s{2,}#.*$", "", (code or "").strip())  # drop a trailing comment
    code = " ".join(code.split())
    if len(code) <= limit:
        return code
    at = code.find(needle) if needle else -1
    if at < 0 or at + len(needle) <= limit - 3:
        return code[: limit - 3] + "..."
    start = max(0, min(at - (limit - len(needle)) // 2, len(code) - (limit - 3)))
    end = start + limit - 6 if start + limit - 3 < len(code) else len(code)
    return "..." + code[start + 3:end] + ("..." if end < len(code) else "")


def _fmt_shape(shape: Iterable) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


_fmt_norm = fmt_norm


_STATUS_TEXT = {
    "received": "grad ok",
    "none": "grad None",
    "zero": "grad zero",
    "nonfinite": "grad inf/nan",
    "frozen": "frozen",
    "not_run": "no backward",
}


def _param_status(t, status_by_tid: dict, after_backward: bool) -> tuple:
    """(status, norm, cause) for a parameter: the summary's row first, then TensorInfo.grad
    (None after a backward ran means no gradient arrived)."""
    ps = status_by_tid.get(t.tid)
    if ps is not None:
        return ps.status, ps.norm, ps.cause
    if not t.requires_grad:
        return "frozen", None, None
    if t.grad is not None:
        return t.grad.status, t.grad.norm, None
    return ("none" if after_backward else None), None, None


def _module_parent(path: str) -> str | None:
    i = path.rfind(".")
    return path[:i] if i > 0 else None


def _mdepth(path: str | None) -> int:
    return len(path.split(".")) if path else 0


# --------------------------------------------------------------------------- full graph
@dataclass(slots=True)
class _N:
    key: tuple
    kind: str
    title: str
    lines: list
    style: str
    order: int
    module: str | None = None
    event: int | None = None
    tid: int | None = None
    nograd: bool = False
    region: str = ""  # "no_grad @ t.py:3" for grad-disabled ops
    n_ops: int = 0
    mark: str = ""
    pprefix: str = ""  # parameters: what precedes the module path in the name (a root's name)
    pleaf: str = ""  # parameters: what follows it ("weight")
    norm: float | None = None  # parameters: the gradient's norm


def _param_home(name: str, consumer: str | None) -> tuple:
    """(module path, prefix, leaf) of a parameter called ``name``, first read by an op in module
    ``consumer``: the module is the consumer's when the name runs through it (``model.fc1.weight``
    read in ``fc1``: ``("fc1", "model.", "weight")``, whatever root prefix the name carries),
    else the name's own parent."""
    if consumer:
        if name.startswith(consumer + "."):
            return consumer, "", name[len(consumer) + 1:]
        at = name.find("." + consumer + ".")
        if at >= 0:
            return consumer, name[:at + 1], name[at + len(consumer) + 2:]
    parent = _module_parent(name)
    return parent, "", name[len(parent) + 1:] if parent else name


@dataclass(slots=True)
class _E:
    src: tuple
    dst: tuple
    kind: str
    label: str = ""
    tid: int | None = None


_EDGE_RANK = {"raised": 7, "cut": 6, "inferred": 5, "root": 4, "autograd": 3, "benign_cut": 2, "data": 1, "order": 0}


class _Full:
    """The complete diagram of every user event, before focus/collapse/truncation."""

    def __init__(self, data: TraceData, summary, lo: int = 0) -> None:
        self.lo = lo  # first event drawn (the last training step by default)
        self.data = data
        self.summary = summary
        self.nodes: dict = {}  # key -> _N, insertion order = creation order
        self.edges: list = []
        self.roots: list = []  # root node keys
        self.module_types: dict = {}
        self.status_by_tid: dict = {}
        self.harmful: set = set()
        self.benign: set = set()
        self.evidence: set = set()
        self._order = 0
        self.after_backward = bool(data.backwards) or any(e.kind == "backward" for e in data.events)
        if summary is not None:
            self.status_by_tid = {p.tid: p for p in summary.params}
            self.harmful = {e.index for e in summary.harmful_cuts}
            self.benign = {e.index for e in summary.benign_cuts}
            exps = list(summary.problems) + ([summary.failure] if summary.failure is not None else [])
            for x in exps:
                for ev in x.evidence:
                    if isinstance(ev, Event):
                        self.evidence.add(ev.index)
        self._build()

    # --- helpers ------------------------------------------------------------------------
    def _add(self, key: tuple, **kw) -> _N:
        n = self.nodes.get(key)
        if n is None:
            n = _N(key=key, order=self._order, **kw)
            self._order += 1
            self.nodes[key] = n
        return n

    def _verdict(self, e: Event) -> str | None:
        if e.index in self.harmful or e.verdict == "harmful":
            return "harmful"
        if e.index in self.benign or e.verdict == "benign":
            return "benign"
        return None

    def _tensor_node(self, tid: int, consumer: str | None = None) -> tuple | None:
        """The node for a tensor nobody in the drawing produced (a parameter or an input);
        ``consumer``: the module of the op that reads it first."""
        key = ("t", tid)
        if key in self.nodes:
            return key
        t = self.data.tensors.get(tid)
        if t is None:
            self._add(key, kind="tensor", title=f"t{tid}", lines=[], style="input", tid=tid)
            return key
        if t.role == "buffer":
            return None
        shape = f"{_fmt_shape(t.shape)} {t.dtype}"
        if t.role == "param":
            status, norm, _cause = _param_status(t, self.status_by_tid, self.after_backward)
            lines = [shape]
            if status is not None:
                st = _STATUS_TEXT.get(status, status)
                if status == "received" and norm is not None:
                    st += f" |g|={_fmt_norm(norm)}"
                lines.append(st)
            style = f"param_{status}" if status in ("received", "none", "zero", "nonfinite", "frozen") else "param"
            module, prefix, leaf = _param_home(t.name or "", consumer)
            self._add(key, kind="param", title=t.label(), lines=lines, style=style, tid=tid,
                      module=module, pprefix=prefix, pleaf=leaf, norm=norm if status == "received" else None)
            return key
        producer = self.data.events[t.producer] if t.producer is not None and t.producer < len(self.data.events) else None
        lines = [shape]
        if producer is not None:
            lines.append(f"from {producer.context}" if producer.context != "user" else "from " + op_short(producer.op))
        elif t.requires_grad:
            lines.append("requires grad")
        title = t.name or (f"input t{tid}" if producer is None else f"t{tid}")
        self._add(key, kind="input", title=title, lines=lines, style="input", tid=tid)
        return key

    # --- build --------------------------------------------------------------------------
    def _build(self) -> None:
        data = self.data
        writer: dict = {}  # tid -> node key of the last drawn event that wrote it
        exits: dict = {}  # tid -> node key of the cut that took its values out of torch
        last_grad_mode: Event | None = None
        backward_events: list = []
        opt_events: list = []
        consumed: set = set()
        for e in data.events:
            if e.index < self.lo:
                continue
            if self.lo and e.kind == "cut" and e.cut in ("item", "numpy", "tolist") and all(
                    (data.tensors[r.tid].producer or 0) < self.lo for r in e.inputs if r.tid in data.tensors):
                continue  # logging left over from the previous step
            if e.kind == "module":  # op: the module's path; module: its parent's; detail: its class
                typ = e.detail.get("class") or e.detail.get("type")
                if e.op and typ and e.op not in self.module_types:
                    self.module_types[e.op] = str(typ).rsplit(".", 1)[-1]
            if e.kind == "optimizer_step":
                opt_events.append(e)
                continue
            if e.context != "user":
                continue
            if e.kind == "grad_mode":
                last_grad_mode = e
                continue
            if e.kind == "backward":
                backward_events.append(e)
                continue
            if e.kind not in _NODE_KINDS:
                continue
            key = ("e", e.index)
            nograd = (not e.grad_enabled) or e.inference_mode
            verdict = self._verdict(e)
            site = e.site.short if e.site else ""
            if e.kind == "cut":
                style = "cut_benign" if verdict == "benign" else "cut"
            elif e.kind == "inplace":
                style = "inplace_bad" if e.index in self.evidence else "inplace"
            elif e.kind == "external":
                style = "external"
            else:
                style = "nograd" if nograd else "op"
            lines = [site] if site else []
            if e.kind in ("cut", "inplace") and e.site and e.site.code:
                needle = op_short(e.op).lstrip(".")
                lines.append(_short_code(e.site.code, needle))
            region = ""
            if nograd:
                mode = "inference_mode" if e.inference_mode else "no_grad"
                where = ""
                if last_grad_mode is not None and last_grad_mode.site is not None and not e.inference_mode:
                    where = f" @ {last_grad_mode.site.short}"
                region = mode + where
                if e.kind == "cut" and style == "cut" and e.cut not in ("no_grad", "inference_mode"):
                    lines.append(f"(under {mode})")
            self._add(key, kind=e.kind if e.kind != "requires_grad" else "op", title=_op_title(e), lines=lines,
                      style=style, module=e.module or None, event=e.index, nograd=nograd, region=region, n_ops=1)
            out_rg = any(o.requires_grad for o in e.outputs)
            seen_src: set = set()
            for ref in e.inputs:
                consumed.add(ref.tid)
                src = writer.get(ref.tid)
                if src is None:
                    src = self._tensor_node(ref.tid, e.module)
                    if src is None:
                        continue
                if (src, ref.tid) in seen_src:
                    continue
                seen_src.add((src, ref.tid))
                kind, label = self._classify(e, ref, out_rg, verdict)
                self.edges.append(_E(src, key, kind, label, ref.tid))
            for src_key, tid in self._links(e, writer, exits):
                self.edges.append(_E(src_key, key, "inferred", "inferred link", tid))
            for ref in e.outputs:
                writer[ref.tid] = key
                if e.kind == "inplace":
                    t = data.tensors.get(ref.tid)
                    if t is not None and t.base is not None:
                        writer[t.base] = key
            if e.kind == "cut" and not e.outputs:
                for ref in e.inputs:
                    exits[ref.tid] = key

        # backward roots
        root_sites: dict = {}
        root_api: dict = {}
        for e in backward_events:
            for ref in e.inputs:
                root_sites.setdefault(ref.tid, e.site)
                root_api.setdefault(ref.tid, e.op)
        root_tids: list = []
        for b in data.backwards:
            if b.event < self.lo:  # an earlier training step (not drawn)
                continue
            for tid in b.roots:
                if tid not in root_tids:
                    root_tids.append(tid)
                if tid not in root_sites and 0 <= b.event < len(data.events):
                    root_sites[tid] = data.events[b.event].site
                    root_api.setdefault(tid, b.api)
        for e in backward_events:
            for ref in e.inputs[:1] if e.op.endswith("backward") else e.inputs:
                if ref.tid not in root_tids:
                    root_tids.append(ref.tid)
        failed = self.summary is not None and self.summary.failure is not None and \
            self.summary.failure.status == "error"
        failed = failed or any(b.error for b in data.backwards)
        for tid in root_tids:
            t = data.tensors.get(tid)
            name = t.name if t is not None and t.name else ("loss" if len(root_tids) == 1 else f"t{tid}")
            site = root_sites.get(tid)
            api = root_api.get(tid) or "backward"
            call = "autograd.grad()" if "grad" == op_short(api) else ".backward()"
            lines = []
            if t is not None and t.shape:
                lines.append(_fmt_shape(t.shape))
            lines.append(call + (f" @ {site.short}" if site else ""))
            key = ("root", tid)
            self._add(key, kind="root", title=name, lines=lines, style="root_failed" if failed else "root", tid=tid)
            self.roots.append(key)
            src = writer.get(tid) or self._tensor_node(tid)
            if src is not None and src != key:
                self.edges.append(_E(src, key, "root", "", tid))

        # parameters nobody used: still drawn (red when the diagnosis says they starve)
        for t in data.params():
            if t.tid not in consumed:
                key = self._tensor_node(t.tid)
                if key is not None:
                    n = self.nodes[key]
                    n.lines.append("not used")

        # the optimizer step(s), summarised as one node
        opt_ctx = [e for e in data.events if e.context == "optimizer"]
        if opt_events or opt_ctx:
            first = (opt_events or opt_ctx)[0]
            steps = len(opt_events) or (self.summary.n_optimizer_steps if self.summary else 0) or 1
            lines = [first.site.short] if first.site else []
            if steps > 1:
                lines.append(f"x{steps}")
            key = ("opt",)
            title = "optimizer.step()"
            if opt_events and first.op and "." in first.op:  # the recorder writes "SGD.step"
                title = ".".join(first.op.split(".")[-2:]) + "()"
            self._add(key, kind="optimizer", title=title, lines=lines, style="optimizer")
            for r in self.roots:
                self.edges.append(_E(r, key, "order"))

        # the exception the traced block raised
        exc = data.exception
        if exc is not None:
            msg = textwrap.wrap(" ".join(exc.message.split()), 44)
            lines = msg[:3] + (["..."] if len(msg) > 3 else [])
            if exc.site is not None:
                lines.append(f"@ {exc.site.short}")
            key = ("exc",)
            self._add(key, kind="exception", title=exc.type, lines=lines, style="exception")
            src = None
            if exc.event is not None:
                src = ("e", exc.event)
                if src not in self.nodes:
                    ev = data.events[exc.event] if 0 <= exc.event < len(data.events) else None
                    src = None
                    if ev is not None and ev.kind == "backward":
                        for ref in ev.inputs:
                            if ("root", ref.tid) in self.nodes:
                                src = ("root", ref.tid)
                                break
            if src is not None:
                self.edges.append(_E(src, key, "raised", "raised here"))

    def _classify(self, e: Event, ref, out_rg: bool, verdict: str | None) -> tuple:
        if not ref.requires_grad:
            return "data", ""
        site = f" @ {e.site.short}" if e.site else ""
        if e.kind == "cut":
            if verdict == "benign":
                return "benign_cut", f"{cut_label(e)}{site} (benign)"
            return "cut", f"{cut_label(e)}{site}"
        if e.kind in ("op", "requires_grad") and e.outputs and not out_rg:
            if e.kind == "op" and op_short(e.op).rsplit(".", 1)[-1] in _SHAPE_ONLY_OPS:
                return "data", ""  # (ones_like(x) reads only x's shape: no gradient was ever meant to flow)
            mode = "no_grad" if not e.grad_enabled else ("inference_mode" if e.inference_mode else "")
            what = f"{op_short(e.op)} under {mode}" if mode else f"{op_short(e.op)} (no gradient)"
            return "cut", f"{what}{site}"
        if e.kind == "op" and not e.outputs:
            return "data", ""
        return "autograd", ""

    def _links(self, e: Event, writer: dict, exits: dict) -> list:
        """Inferred links of ``e``: [(source node key, tid)].

        The recorder writes ``detail["links"]``: indices of the events whose values came
        back here (``numpy()`` then ``torch.from_numpy``, ``item()`` then ``torch.tensor``),
        and ``detail["inferred"]``: how it knows (``"memory"``, ``"shape"``, ``"value"``).
        Dicts ``{"tid": ..}`` / ``{"event": ..}`` are read too.
        """
        raw = e.detail.get("links")
        if not raw:
            return []
        items: list = []
        if isinstance(raw, dict):
            for v in raw.values():
                items.extend(v if isinstance(v, (list, tuple)) else [v])
        elif isinstance(raw, (list, tuple)):
            items = list(raw)
        else:
            items = [raw]
        out = []
        for it in items:
            tid = ev = None
            if isinstance(it, bool):
                continue
            if isinstance(it, int):
                ev = it
            elif isinstance(it, dict):
                tid = it.get("tid", it.get("from_tid", it.get("src")))
                ev = it.get("event", it.get("from_event"))
            elif isinstance(it, (list, tuple)) and it and isinstance(it[0], int):
                tid = it[0]
            src = None
            if isinstance(ev, int) and ("e", ev) in self.nodes:
                src = ("e", ev)
            elif isinstance(tid, int):
                src = exits.get(tid) or writer.get(tid) or self._tensor_node(tid)
            if src is not None and src != ("e", e.index):
                out.append((src, tid if isinstance(tid, int) else None))
        return out


# --------------------------------------------------------------------------- graph algorithms
def _adjacency(edges: list) -> tuple:
    succ: dict = {}
    pred: dict = {}
    for e in edges:
        if e.kind == "order":
            continue
        succ.setdefault(e.src, []).append(e.dst)
        pred.setdefault(e.dst, []).append(e.src)
    return succ, pred


def _reach(starts: Iterable, nbrs: dict, limit: int | None = None) -> list:
    """Breadth-first reach from ``starts`` (included), nearest first."""
    seen = {}
    q = deque()
    for s in starts:
        if s not in seen:
            seen[s] = None
            q.append(s)
    while q and (limit is None or len(seen) < limit):
        n = q.popleft()
        for m in nbrs.get(n, ()):
            if m not in seen:
                seen[m] = None
                q.append(m)
                if limit is not None and len(seen) >= limit:
                    break
    return list(seen)


# --------------------------------------------------------------------------- build_graph
def build_graph(
    data: TraceData,
    summary=None,
    *,
    focus: int | None = None,
    depth: int | None = None,
    max_nodes: int = 150,
    collapse: bool | None = None,
    all_steps: bool = False,
) -> GraphView:
    """Build the diagram of a traced step.

    Args:
        data: the recorded step (``tr.data``).
        summary: the diagnosis (``tr.summary()``); with it, harmful cuts are red and
            benign ones grey, parameters are coloured by gradient status, and big traces
            keep the problems' paths visible when collapsed.
        focus: a tensor id: draw only the data paths between that tensor and the
            backward roots (across cuts, so the cut that starves it is on the drawing).
        depth: draw modules nested ``depth`` levels deep or deeper as single boxes
            (``depth=1``: top-level modules are boxes), except the modules that hold a
            harmful cut (or the failure's evidence, or the focus): those stay open, down
            to the cut, with their other submodules as boxes.
        max_nodes: at most this many nodes; the rest become one ``N ops hidden`` node.
        collapse: fold repeated blocks (``blocks.0-11 (x12)``; a run of blocks splits where
            their parameters' gradient status changes) and, when still too big, collapse
            modules. ``None`` (default): when the trace has more than ``max_nodes`` nodes,
            fold and collapse modules to the deepest depth that fits a screen (about
            ``SCREEN_NODES`` nodes in ``SCREEN_RANKS`` rows), keeping every module that
            holds a harmful cut open. ``True``: always fold; collapse modules only past
            ``max_nodes``. ``False``: never (``depth`` still applies). A module box never
            sits on a cycle (a module called twice around other ops is opened) and never
            mixes gradient statuses (a module holding starved and healthy parameters is
            opened).
        all_steps: draw every training step. By default a trace with several backward calls
            draws only the last step (the others repeat it), and says so in a note.

    Returns:
        A :class:`GraphView` (plain data; ``.source``, ``.render(path)``).

    Raises:
        UnknownTargetError: ``focus`` names a tensor the trace never saw.
    """
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be 1 or more, or None (got {depth!r})")
    if max_nodes < 5:
        raise ValueError(f"max_nodes must be at least 5 (got {max_nodes!r})")
    lo = 0
    bws = [e.index for e in data.events if e.kind == "backward"]
    if not all_steps and len(bws) > 1 and focus is None:
        lo = bws[-2] + 1
        # the optimizer step after the previous backward (and its parameter writes) ends that step
        ev = data.events
        for i in range(bws[-1] - 1, bws[-2], -1):
            if ev[i].kind == "optimizer_step":
                ends = [j for j in range(i + 1, bws[-1]) if ev[j].detail.get("step") == i]
                lo = (ends[0] if ends else i) + 1
                break
    full = _Full(data, summary, lo)
    nodes = full.nodes
    edges = full.edges
    succ, pred = _adjacency(edges)
    notes: list = []
    if lo:
        notes.append(f"showing the last of {len(bws)} training steps (graph(all_steps=True) draws them all)")
    fixed = set(full.roots) | {k for k in (("opt",), ("exc",)) if k in nodes}

    # ---- focus: only the data paths between the tensor and the backward roots
    keep: set | None = None
    focus_keys: list = []
    if focus is not None:
        if focus not in data.tensors:
            raise UnknownTargetError(
                f"focus={focus!r}: the trace saw no tensor with that id (tensor ids run from 0 to "
                f"{max(data.tensors) if data.tensors else -1}); pass a tid from tr.data.tensors")
        t = data.tensors[focus]
        if ("t", focus) in nodes:
            focus_keys.append(("t", focus))
        if ("root", focus) in nodes:
            focus_keys.append(("root", focus))
        if t.producer is not None and ("e", t.producer) in nodes:
            focus_keys.append(("e", t.producer))
        if not focus_keys:  # produced outside the drawing: start from its consumers
            focus_keys = [e.dst for e in edges if e.tid == focus and e.kind != "order"]
        down = set(_reach(focus_keys, succ))
        up = set(_reach(full.roots, pred))
        keep = down & up
        if not keep:
            keep = down
            notes.append(f"{data.name_of(focus)} has no data path to the backward root")
        keep |= set(focus_keys) | fixed
        for k in focus_keys:
            nodes[k].mark = "focus"

    order = [k for k in nodes if keep is None or k in keep]

    # ---- pinned: never folded into a module box, never hidden
    pinned: set = set(fixed)
    harmful_keys = []
    for k in order:
        n = nodes[k]
        if n.kind == "cut" and n.style == "cut":
            pinned.add(k)
            harmful_keys.append(k)
        elif n.event is not None and n.event in full.evidence or n.kind == "param" and n.style in ("param_none", "param_zero", "param_nonfinite"):
            pinned.add(k)
    cut_dsts = sorted({e.dst for e in edges if e.kind == "cut"}, key=lambda k: nodes[k].order)
    for k in cut_dsts:
        if (keep is None or k in keep) and k not in pinned and nodes[k].kind != "exception":
            pinned.add(k)
            harmful_keys.append(k)
    if focus is not None:
        pinned |= set(focus_keys)
    context: set = set()
    for k in harmful_keys:  # the path through each harmful cut: a few ops either side
        for m in _reach([k], pred, limit=8) + _reach([k], succ, limit=8):
            if keep is None or m in keep:
                context.add(m)

    # ---- decide how much to collapse
    n_full = len(order)
    auto = collapse is None
    mapping: dict = {k: k for k in order}
    # the default folds and collapses when the plain drawing would not fit a screen
    too_big = auto and (n_full > max_nodes or _too_tall(nodes, order, mapping, edges))
    do_fold = bool(collapse) or too_big
    folded_labels: list = []
    fold_names: dict = {}  # block path -> "blocks.0-11 (x12)"
    instance: dict = {}
    if do_fold:
        fold_names, folded_labels = _fold_repeats(nodes, order, mapping, pinned, instance)

    def reps() -> list:
        return [k for k in order if mapping[k] == k]

    # Modules holding an anchor (a harmful cut, the failure's evidence, the focus) stay open
    # at every depth, so the cut is drawn inside its own module with its neighbours while
    # the sibling modules around it become boxes.
    anchors = set(fixed) | set(harmful_keys) | set(focus_keys) | \
        {k for k in order if nodes[k].event is not None and nodes[k].event in full.evidence}
    open_mods: set = set()
    for k in anchors:
        m = nodes[k].module
        while m:
            open_mods.add(m)
            m = _module_parent(m)
    open_mods |= _mixed_status_modules(nodes, order)
    use_depth = depth
    cand = reps()
    if use_depth is None and (collapse or too_big):
        # the deepest depth whose drawing fits a screen (SCREEN_NODES boxes, SCREEN_RANKS
        # rows), or the shallowest there is
        # the deepest depth whose drawing fits a screen (SCREEN_NODES nodes in SCREEN_RANKS
        # rows), at each depth first with the folded blocks' ancestors open (so a fold is a
        # box of its own: "encoder.layer.0-11 (x12)"), else the shallowest there is
        budget, max_ranks = (min(max_nodes, SCREEN_NODES), SCREEN_RANKS) if auto else (max_nodes, 10 ** 9)
        max_d = max((_mdepth(nodes[k].module) for k in cand), default=0)
        fold_open = set(open_mods)
        for blk in fold_names:
            m = _module_parent(blk)
            while m:
                fold_open.add(m)
                m = _module_parent(m)
        tries = [(None, open_mods)] + [(d, o) for d in range(max_d, 0, -1)
                                       for o in ((fold_open, open_mods) if fold_open != open_mods else (open_mods,))]
        for d, base in tries:
            if d is None:
                n_boxes, ranks = _measure(nodes, cand, mapping, edges, instance, {})
            else:
                opened = _open_cycles(nodes, cand, mapping, edges, instance, anchors, base, d)
                n_boxes, ranks = _measure(nodes, cand, mapping, edges, instance,
                                          _box_of(nodes, cand, anchors, opened, d))
            use_depth, open_mods = d, base
            if n_boxes <= budget and ranks <= max_ranks:
                break
    if use_depth is not None:
        open_mods = _open_cycles(nodes, cand, mapping, edges, instance, anchors, open_mods, use_depth)
    mod_nodes: dict = {}
    if use_depth is not None:
        _collapse_depth(nodes, order, mapping, anchors, open_mods, use_depth, mod_nodes, fold_names, full)

    # ---- collapsed views leave out benign dead ends (loss.item() for logging, ...)
    omitted = 0
    if do_fold or use_depth is not None:
        has_out = {e.src for e in edges if e.kind != "order"}
        for k in order:
            n = nodes[k]
            if n.style == "cut_benign" and k not in has_out and k not in anchors and \
                    (mapping[k] == k or (mapping[k] in nodes and nodes[mapping[k]].style == "cut_benign")):
                mapping[k] = None
                omitted += 1
        if omitted:
            notes.append(f"{omitted} benign cut{'s' if omitted != 1 else ''} (e.g. .item() for logging) not "
                         "drawn; collapse=False draws them")

    # ---- truncate past max_nodes
    final_keys: list = []
    seen_final: set = set()
    for k in order:
        m = mapping[k]
        if m is None:
            continue
        if m not in seen_final:
            seen_final.add(m)
            final_keys.append(m)
    hidden_ops = 0
    hidden_tensors = 0
    if len(final_keys) > max_nodes:
        budget = max_nodes - 1
        evidence_keys = {k for k in final_keys if k in nodes and nodes[k].event in full.evidence}
        tiers = (set(full.roots) | fixed | set(harmful_keys) | set(focus_keys), evidence_keys, context,
                 pinned, set(final_keys))
        kept: set = set()
        for tier in tiers:  # what matters most first: roots and cuts, evidence, their paths, ...
            for k in final_keys:
                if len(kept) >= budget:
                    break
                if k in tier and k not in kept:
                    kept.add(k)
        hidden_key = ("hidden",)
        for k in order:
            m = mapping[k]
            if m is not None and m not in kept:
                mapping[k] = hidden_key
                n = nodes[k]
                if n.kind in ("param", "input", "tensor"):
                    hidden_tensors += 1
                elif n.event is not None:
                    hidden_ops += 1
        final_keys = [k for k in final_keys if k in kept] + [hidden_key]
        what = f"{hidden_ops} ops" + (f" and {hidden_tensors} tensors" if hidden_tensors else "")
        all_nodes_hidden = _N(key=hidden_key, kind="hidden", title=f"{what} hidden",
                              lines=[f"max_nodes={max_nodes}; pass max_nodes=, depth= or focus="],
                              style="hidden", order=10 ** 9, n_ops=hidden_ops)
        mod_nodes[hidden_key] = all_nodes_hidden

    def get(k):
        return mod_nodes.get(k) or nodes[k]

    # ---- edges between final nodes
    ekeep: dict = {}
    for e in edges:
        if e.src not in mapping or e.dst not in mapping:
            continue
        s, d = mapping[e.src], mapping[e.dst]
        if s == d or s is None or d is None:
            continue
        si, di = instance.get(e.src), instance.get(e.dst)
        if si is not None and di is not None and si[0] == di[0] and si[1] != di[1]:
            continue  # one folded copy feeding the next: drawn once, so no back edge
        pair = (s, d)
        old = ekeep.get(pair)
        if old is None or _EDGE_RANK[e.kind] > _EDGE_RANK[old.kind]:
            ekeep[pair] = _E(s, d, e.kind, e.label, e.tid)

    # ---- ids, clusters
    final_nodes = sorted((get(k) for k in final_keys), key=lambda n: n.order)
    ids = {n.key: f"n{i}" for i, n in enumerate(final_nodes)}
    clusters, cluster_of = _clusters(final_nodes, full, use_depth, fold_names)
    out_nodes = [
        GNode(id=ids[n.key], kind=n.kind, title=n.title, lines=tuple(n.lines), style=n.style,
              cluster=cluster_of.get(n.key), event=n.event, tid=n.tid, n_ops=n.n_ops, mark=n.mark)
        for n in final_nodes
    ]
    out_edges = [GEdge(ids[e.src], ids[e.dst], e.kind, e.label, e.tid) for e in ekeep.values()]

    # ---- title and legend
    title_lines = []
    if summary is not None:
        if summary.verdict:
            title_lines.append(summary.verdict)
        exps = ([summary.failure] if summary.failure is not None else []) + list(summary.problems)
        for x in exps[:4]:
            where = f" @ {x.site.short}" if x.site is not None else ""
            status = _STATUS_TEXT.get(x.status, x.status)
            what = f"{x.target}: " if x.target else ""
            title_lines.append(f"{what}{status + ', ' if status else ''}{x.cause.replace('_', ' ')}{where}")
        if len(exps) > 4:
            title_lines.append(f"... and {len(exps) - 4} more")
    if omitted:
        title_lines.append(f"({omitted} benign cut{'s' if omitted != 1 else ''} not drawn)")
    title = "\n".join(title_lines)
    if focus is not None:
        title = (title + "\n" if title else "") + f"focus: {data.name_of(focus)}"
    legend = _legend(out_nodes, out_edges, clusters)
    return GraphView(nodes=out_nodes, edges=out_edges, clusters=clusters, hidden=hidden_ops, title=title,
                     legend=legend, collapsed=bool(folded_labels) or use_depth is not None, depth=use_depth,
                     folded=folded_labels, focus=focus, notes=notes)


# --------------------------------------------------------------------------- folding
def _fold_repeats(nodes: dict, order: list, mapping: dict, pinned: set, instance: dict) -> tuple:
    """Fold runs of sibling blocks (``blocks.0``, ``blocks.1``, ...) whose drawings are identical.

    Two blocks are identical when they run the same ops in the same modules with the same
    look, and their parameters have the same gradient status: a run stops where the status
    changes (a cut after block 12 of 20 folds ``blocks.0-12 (x13)``, all "grad None", and
    ``blocks.13-19 (x7)``, all "grad ok"), so a folded drawing never claims a status a copy
    does not have. Nodes of a run's later blocks map onto its first block's nodes;
    ``instance`` gets key -> (run, block index) so the edges from one copy to the next can
    be dropped. Returns ({first block's path: label}, labels).
    """
    events = [k for k in order if k[0] == "e"]
    by_block: dict = {}  # block path -> [event keys]
    for k in events:
        for b in _numbered_prefixes(nodes[k].module):
            by_block.setdefault(b, []).append(k)
    params_by_block: dict = {}  # block path -> {(module below the block, leaf): param key}
    status_by_block: dict = {}  # block path -> {(module below, leaf): style}, drawn or not (focus=)
    drawn = set(order)
    for k, n in nodes.items():
        if n.kind == "param" and n.module:
            for b in _numbered_prefixes(n.module):
                status_by_block.setdefault(b, {})[(n.module[len(b):], n.pleaf)] = n.style
                if k in drawn:
                    params_by_block.setdefault(b, {})[(n.module[len(b):], n.pleaf)] = k
    # a run of blocks never spans a harmful cut (or other pinned node) drawn between two of them
    pinned_at = sorted(nodes[k].order for k in pinned if k in drawn and k in nodes)
    groups: dict = {}  # parent -> {index: block}
    for b in by_block:
        parent, _, idx = b.rpartition(".")
        groups.setdefault(parent, {})[int(idx)] = b
    names: dict = {}
    labels: list = []
    hidden_blocks: set = set()
    for parent in sorted(groups, key=lambda p: (p.count(".") if p else -1, p)):
        blocks = groups[parent]
        if any(parent == h or parent.startswith(h + ".") for h in hidden_blocks):
            continue
        idxs = sorted(blocks)
        sigs = {i: _block_sig(nodes, by_block[blocks[i]], blocks[i], pinned, status_by_block.get(blocks[i], {}))
                for i in idxs}
        run: list = []
        for i in idxs + [None]:
            if i is not None and run and i == run[-1] + 1 and sigs[i] == sigs[run[0]] and sigs[i] is not None \
                    and _follows(nodes[by_block[blocks[run[-1]]][-1]].order, nodes[by_block[blocks[i]][0]].order,
                                 pinned_at):
                run.append(i)
                continue
            if len(run) >= 2:
                first = blocks[run[0]]
                base = by_block[first]
                label = f"{parent + '.' if parent else ''}{run[0]}-{run[-1]} (x{len(run)})"
                names[first] = label
                labels.append(label)
                pfirst = params_by_block.get(first, {})
                for j in run:
                    for c in by_block[blocks[j]]:
                        instance[c] = (first, j)
                norms: dict = {rel: [nodes[pk].norm] for rel, pk in pfirst.items()}
                for j in run[1:]:
                    b = blocks[j]
                    hidden_blocks.add(b)
                    for a, c in zip(base, by_block[b]):
                        mapping[c] = a
                        nodes[a].n_ops += nodes[c].n_ops
                    for rel, pk in params_by_block.get(b, {}).items():
                        if rel in pfirst:
                            mapping[pk] = pfirst[rel]
                            norms[rel].append(nodes[pk].norm)
                rng = f"{run[0]}-{run[-1]}"
                for rel, pk in pfirst.items():
                    n = nodes[pk]
                    n.title = f"{n.pprefix}{parent + '.' if parent else ''}{rng}{rel[0]}.{rel[1]}"
                    _fold_status_line(n, norms[rel], len(run))
            run = [i] if i is not None and sigs[i] is not None else []
    return names, labels


def _follows(prev_end: int, start: int, pinned_at: list) -> bool:
    """A block starting at ``start`` continues a run whose last block ended at ``prev_end``:
    it comes after it, with no pinned node (a harmful cut) in between."""
    if start <= prev_end:
        return False
    i = bisect.bisect_right(pinned_at, prev_end)
    return i >= len(pinned_at) or pinned_at[i] >= start


def _numbered_prefixes(module: str | None) -> list:
    """``h.3.attn.c_attn`` -> ``["h.3"]``: the module's ancestors that are numbered blocks."""
    if not module:
        return []
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1) if parts[i - 1].isdigit()]


def _fold_status_line(n: _N, norms: list, times: int) -> None:
    """A folded parameter's gradient line speaks for every copy: ``grad ok |g| 0.1-0.3 (x7)``."""
    if len(n.lines) < 2 or n.style not in _STATUS_STYLES:  # lines: shape, status[, "not used"]
        return
    known = [v for v in norms if v is not None]
    if n.style == "param_received" and known:
        lo, hi = _fmt_norm(min(known)), _fmt_norm(max(known))
        n.lines[1] = f"grad ok |g|={lo if lo == hi else lo + '..' + hi}"
    n.lines[1] += f" (all {times})"


_STATUS_STYLES = frozenset({"param_received", "param_none", "param_zero", "param_nonfinite", "param_frozen"})
_BAD_STYLES = frozenset({"param_none", "param_zero", "param_nonfinite"})


def _block_sig(nodes: dict, keys: list, block: str, pinned: set, statuses: dict):
    """What makes two blocks the same drawing (their ops and their parameters' gradient
    status); None when a block must stay visible."""
    sig = []
    for k in keys:
        n = nodes[k]
        if k in pinned or n.kind == "cut":
            return None
        rel = (n.module or "")[len(block):]
        sig.append((rel, n.kind, n.title, n.style, n.region.split(" @ ")[0]))
    sig.append(tuple(sorted(statuses.items())))
    return tuple(sig)


# --------------------------------------------------------------------------- depth collapse
_BOXABLE = frozenset({"op", "cut", "inplace", "external", "hook", "param"})


def _box(module: str | None, depth: int, open_mods: set) -> str | None:
    """The collapsed module a node in ``module`` is drawn as, or None (drawn itself)."""
    if not module:
        return None
    parts = module.split(".")
    for d in range(depth, len(parts) + 1):
        p = ".".join(parts[:d])
        if p not in open_mods:
            return p
    return None


#: What the default view aims at: at most this many nodes in at most this many rows; about
#: what fits 2400x1600 px at Graphviz's 96 dpi (tests/test_graph_scale.py renders and measures).
SCREEN_NODES = 30
SCREEN_RANKS = 12


def _too_tall(nodes: dict, order: list, mapping: dict, edges: list) -> bool:
    n, ranks = _measure(nodes, order, mapping, edges, {}, {})
    return n > SCREEN_NODES or ranks > SCREEN_RANKS


def _box_of(nodes: dict, cand: list, anchors: set, open_mods: set, depth: int) -> dict:
    """key -> the collapsed module it is drawn in, for the nodes that go into a box."""
    out = {}
    for k in cand:
        n = nodes[k]
        if k not in anchors and n.kind in _BOXABLE:
            b = _box(n.module, depth, open_mods)
            if b is not None:
                out[k] = ("mod", b)
    return out


def _drawn_edges(cand: list, mapping: dict, edges: list, instance: dict, box_of: dict) -> dict:
    """The edges between drawn nodes (folded and boxed): {src: {dst}}."""
    keep = set(cand)
    succ: dict = {}
    for e in edges:
        if e.kind == "order":
            continue
        s, d = mapping.get(e.src), mapping.get(e.dst)
        if s not in keep or d not in keep:
            continue
        si, di = instance.get(e.src), instance.get(e.dst)
        if si is not None and di is not None and si[0] == di[0] and si[1] != di[1]:
            continue
        s, d = box_of.get(s, s), box_of.get(d, d)
        if s != d:
            succ.setdefault(s, set()).add(d)
    return succ


def _cyclic(succ: dict) -> set:
    """The nodes on a cycle of ``succ`` (strongly connected components of two or more)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    out: set = set()
    counter = 0
    for root in list(succ):
        if root in index:
            continue
        work = [(root, iter(sorted(succ.get(root, ()), key=repr)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ()), key=repr))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.update(comp)
    return out


def _open_cycles(nodes: dict, cand: list, mapping: dict, edges: list, instance: dict, anchors: set,
                 open_mods: set, depth: int) -> set:
    """``open_mods`` plus every module whose box would sit on a cycle (a ReLU module called
    three times in a block; a ModuleList whose blocks feed a cut between two of them and
    take its output back): a box on a cycle says nothing about the order, so it is opened."""
    opened = set(open_mods)
    for _ in range(32):
        box_of = _box_of(nodes, cand, anchors, opened, depth)
        bad = {k[1] for k in _cyclic(_drawn_edges(cand, mapping, edges, instance, box_of)) if k[0] == "mod"}
        if not bad:
            break
        opened |= bad
    return opened


def _measure(nodes: dict, cand: list, mapping: dict, edges: list, instance: dict, box_of: dict) -> tuple:
    """(nodes, rows) of the drawing: distinct drawn nodes, and the longest chain of edges."""
    drawn = {box_of.get(k, k) for k in cand}
    succ = _drawn_edges(cand, mapping, edges, instance, box_of)
    rank: dict = {}
    order_of = {}
    for k in cand:
        d = box_of.get(k, k)
        order_of[d] = min(order_of.get(d, nodes[k].order), nodes[k].order)
    for d in sorted(drawn, key=lambda x: order_of[x]):  # event order is (nearly) topological
        r = rank.get(d, 0)
        rank[d] = r
        for m in succ.get(d, ()):
            if order_of.get(m, -1) > order_of[d]:
                rank[m] = max(rank.get(m, 0), r + 1)
    return len(drawn), (max(rank.values()) + 1 if rank else 0)


def _mixed_status_modules(nodes: dict, order: list) -> set:
    """Modules whose parameters do not share one gradient status (some received, some got
    none, some frozen): never one box, so every box has one true status."""
    classes: dict = {}
    for k in order:
        n = nodes[k]
        if n.kind != "param" or not n.module:
            continue
        c = "bad" if n.style in ("param_none", "param_zero", "param_nonfinite") else n.style
        m = n.module
        while m:
            classes.setdefault(m, set()).add(c)
            m = _module_parent(m)
    return {m for m, cs in classes.items() if len(cs) > 1}


def _collapse_depth(nodes: dict, order: list, mapping: dict, anchors: set, open_mods: set, depth: int,
                    mod_nodes: dict, fold_names: dict, full: _Full) -> None:
    counts: dict = {}
    for k in order:
        rep = mapping[k]
        n = nodes[rep]
        if rep in anchors or n.kind not in _BOXABLE:
            continue
        box = _box(n.module, depth, open_mods)
        if box is None:
            continue
        mk = ("mod", box)
        info = counts.setdefault(mk, {"ops": 0, "params": 0, "bad": 0, "nograd": 0, "order": n.order, "module": box,
                                      "status": {}})
        info["order"] = min(info["order"], nodes[k].order)
        if nodes[k].kind == "param":  # every parameter, folded copies included
            info["params"] += 1
            st = nodes[k].style
            if st in ("param_none", "param_zero", "param_nonfinite"):
                info["bad"] += 1
            if st in _STATUS_STYLES:
                info["status"][st] = info["status"].get(st, 0) + 1
        else:
            info["ops"] += max(nodes[k].n_ops, 1) if rep == k else 0
            if nodes[k].nograd:
                info["nograd"] += 1
        mapping[k] = mk
    for mk, info in counts.items():
        box = info["module"]
        title = fold_names.get(box, box)
        for blk, label in fold_names.items():  # a module inside folded blocks: name the whole range
            if box.startswith(blk + "."):
                title = label.partition(" (")[0] + box[len(blk):]
                break
        typ = full.module_types.get(box)
        lines = [typ] if typ else []
        n_p = info["params"]
        what = f"{info['ops']} op{'s' if info['ops'] != 1 else ''}" if info["ops"] else "not run"
        if n_p:
            what += f", {n_p} param{'s' if n_p != 1 else ''}"
        lines.append(what)
        for blk, label in fold_names.items():  # folded blocks inside the box: "repeats layer.0-11 (x12)"
            if blk.startswith(box + "."):
                lines.append(f"repeats {label[len(box) + 1:]}")
        # the parameters' gradient status, in the words of the parameter nodes ("grad None")
        sts = sorted(info["status"].items(), key=lambda kv: (kv[0] not in _BAD_STYLES, kv[0]))
        if len(sts) == 1:
            lines.append(_STATUS_TEXT[sts[0][0][len("param_"):]] + (f" (all {n_p})" if n_p > 1 else ""))
        elif sts:
            lines.append(", ".join(f"{c} {_STATUS_TEXT[st[len('param_'):]]}" for st, c in sts))
        style = "module_bad" if info["bad"] else ("module_nograd" if info["ops"] and info["nograd"] >= info["ops"]
                                                  else "module")
        mod_nodes[mk] = _N(key=mk, kind="module", title=title, lines=lines, style=style, order=info["order"],
                           module=_module_parent(box), n_ops=info["ops"])
    # keys of modules never map onto themselves in `nodes`; expose them through mapping
    for mk in counts:
        mapping.setdefault(mk, mk)


# --------------------------------------------------------------------------- clusters
def _clusters(final_nodes: list, full: _Full, depth: int | None, fold_names: dict) -> tuple:
    """Module clusters (and grad-disabled sub-clusters) for the final nodes."""
    home: dict = {}  # node key -> module path (a collapsed module's is its parent's)
    for n in final_nodes:
        home[n.key] = (n.module or None) if n.kind in _BOXABLE or n.kind == "module" else None
    # which module paths get a cluster: those holding op nodes, plus their ancestors
    direct: dict = {}
    for n in final_nodes:
        m = home.get(n.key)
        if m and n.kind != "param":
            direct[m] = direct.get(m, 0) + 1
    paths: set = set()
    for m in direct:
        parts = m.split(".")
        for i in range(1, len(parts) + 1):
            paths.add(".".join(parts[:i]))
    # params go into their module's cluster only when that cluster exists
    for n in final_nodes:
        if n.kind == "param":
            m = home.get(n.key)
            while m and m not in paths:
                m = _module_parent(m)
            home[n.key] = m
    # drop clusters that only wrap one child cluster and hold nothing themselves
    holders: dict = {}
    for n in final_nodes:
        m = home.get(n.key)
        if m:
            holders[m] = holders.get(m, 0) + 1
    kids: dict = {}
    for p in paths:
        kids.setdefault(_module_parent(p), []).append(p)
    drop = {p for p in paths if not holders.get(p) and len(kids.get(p, ())) <= 1}
    paths -= drop

    def parent_of(p: str) -> str | None:
        q = _module_parent(p)
        while q and q not in paths:
            q = _module_parent(q)
        return q

    first_order: dict = {}
    for n in final_nodes:
        m = home.get(n.key)
        while m:
            if m in paths and m not in first_order:
                first_order[m] = n.order
            m = _module_parent(m)
    ordered = sorted(paths, key=lambda p: (first_order.get(p, 10 ** 9), p.count("."), p))
    ids = {p: f"cluster_{i}" for i, p in enumerate(ordered)}
    clusters = []
    for p in ordered:
        typ = full.module_types.get(p)
        par = parent_of(p)
        if p in fold_names:  # "blocks.0-6 (x7)" -> "blocks.0-6 (Block) x7"
            rng, _, times = fold_names[p].partition(" (")
            label = f"{rng}{f' ({typ})' if typ else ''} {times.rstrip(')')}"
        else:
            label = p
            rel = p[len(par) + 1:] if par and p.startswith(par + ".") else ""
            if rel and not rel.split(".")[0].isdigit():
                label = rel  # nested clusters read "attn" inside "blocks.7"
            if typ:
                label += f" ({typ})"
        clusters.append(GCluster(ids[p], label, "repeat" if p in fold_names else "module",
                                 ids[par] if par else None, p))
    cluster_of: dict = {}
    for n in final_nodes:
        m = home.get(n.key)
        while m and m not in paths:
            m = _module_parent(m)
        if m:
            cluster_of[n.key] = ids[m]
    # grad-disabled regions: runs of consecutive no-grad ops (same region) get one grey
    # cluster; it wraps whole module clusters when they hold nothing else.
    runs: list = []
    run: list = []
    run_region = None
    for n in final_nodes:
        if n.kind in ("op", "cut", "inplace") and n.nograd and n.event is not None:
            if n.region != run_region and run:
                runs.append((run_region, run))
                run = []
            run_region = n.region
            run.append(n.key)
        elif n.kind in ("op", "cut", "inplace", "module", "external", "hook"):
            if run:
                runs.append((run_region, run))
            run, run_region = [], None
    if run:
        runs.append((run_region, run))
    _nograd_clusters(runs, final_nodes, clusters, cluster_of)
    return clusters, cluster_of


def _nograd_clusters(runs: list, final_nodes: list, clusters: list, cluster_of: dict) -> None:
    parent = {c.id: c.parent for c in clusters}

    def chain(cid):  # the cluster and its ancestors, innermost first
        out = []
        while cid is not None:
            out.append(cid)
            cid = parent.get(cid)
        return out

    members: dict = {}  # cluster id -> node keys anywhere inside it
    for n in final_nodes:
        for cid in chain(cluster_of.get(n.key)):
            members.setdefault(cid, []).append(n)
    n_ng = 0
    for region, keys in runs:
        in_run = set(keys)
        chains = [chain(cluster_of.get(k))[::-1] for k in keys]  # outermost first
        lca = None
        for level in zip(*chains):
            if all(c == level[0] for c in level):
                lca = level[0]
            else:
                break
        tops = {}
        for ch in chains:
            i = ch.index(lca) + 1 if lca is not None else 0
            if i < len(ch):
                tops[ch[i]] = None
        ok = all(n.key in in_run or n.kind in ("param", "input", "tensor")
                 for t in tops for n in members.get(t, ()))
        groups = [(lca, keys, list(tops))] if ok else []
        if not ok:  # cannot wrap whole modules: one grey cluster per module cluster
            by_cluster: dict = {}
            for k in keys:
                by_cluster.setdefault(cluster_of.get(k), []).append(k)
            groups = [(c, ks, []) for c, ks in by_cluster.items()]
        for par, ks, wrapped in groups:
            cid = f"cluster_ng{n_ng}"
            n_ng += 1
            at = min([i for i, c in enumerate(clusters) if c.id in wrapped] or [len(clusters)])
            clusters.insert(at, GCluster(cid, region, "nograd", par, None))
            for c in clusters:
                if c.id in wrapped:
                    c.parent = cid
            parent[cid] = par
            for w in wrapped:
                parent[w] = cid
            for k in ks:
                if cluster_of.get(k) == par:
                    cluster_of[k] = cid


# --------------------------------------------------------------------------- legend
def _legend(nodes: list, edges: list, clusters: list) -> list:
    styles = {n.style for n in nodes}
    kinds = {e.kind for e in edges}
    out = []
    if "cut" in kinds:
        out.append(("cut", "cut: values flow on, gradient stops here"))
    if "benign_cut" in kinds:
        out.append(("benign_cut", "harmless cut (e.g. logging)"))
    if "inferred" in kinds:
        out.append(("inferred", "inferred link (values left torch and came back)"))
    if "autograd" in kinds or "root" in kinds:
        out.append(("autograd", "autograd edge: gradient flows back"))
    if "data" in kinds:
        out.append(("data", "data only (nothing here needs a gradient)"))
    if "nograd" in styles or any(c.kind == "nograd" for c in clusters):
        out.append(("nograd", "grad disabled (no_grad / inference_mode)"))
    if styles & {"inplace", "inplace_bad"}:
        out.append(("inplace", "in-place write"))
    if styles & {"root", "root_failed"}:
        out.append(("root", "backward root"))
    for st, text in (("param_received", "parameter: received a gradient"),
                     ("param_none", "parameter: grad is None"),
                     ("param_zero", "parameter: gradient is zero"),
                     ("param_nonfinite", "parameter: gradient has inf/nan"),
                     ("param_frozen", "parameter: frozen (requires_grad=False)")):
        if st in styles:
            out.append((st, text))
    if styles & {"module", "module_bad", "module_nograd"}:
        out.append(("module", "collapsed module"))
    if any(c.kind == "repeat" for c in clusters):
        out.append(("repeat", "repeated blocks, drawn once"))
    else:
        for n in nodes:  # a folded run drawn as one box: say what "(x13)" means, with its own name
            m = re.search(r" \(x(\d+)\)$", n.title) if n.kind == "module" else None
            if m:
                out.append(("module", f"{n.title}: {m.group(1)} alike blocks in one box"))
                break
    return out
