"""The DOT text of a :class:`~gradscope.render.view.GraphView`: HTML-like labels, clusters,
the legend. Needs the ``graphviz`` Python package (imported lazily), never the ``dot`` program."""
from __future__ import annotations

import html

from .backend import _import_graphviz
from .view import GNode
from .style import _CLUSTER_STYLES, _EDGE_STYLES, _LEGEND_SAMPLES, _NODE_STYLES, _P, _STATUS_LINE_COLOR, PALETTE


def _h(text: str) -> str:
    return html.escape(text, quote=True)


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


def to_digraph(view):
    """``view`` as a ``graphviz.Digraph``: DOT source only; :mod:`.backend` renders it."""
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
            **({"label": _title_label(view.title)} if view.title else {}),
        },
        node_attr={"fontname": "Helvetica", "fontsize": "10", "margin": "0.12,0.04", "height": "0.3",
                   "color": PALETTE["ink"], "fontcolor": PALETTE["ink"]},
        edge_attr={"fontname": "Helvetica", "fontsize": "9", "arrowsize": "0.6", "color": PALETTE["ink"]},
    )
    by_cluster: dict = {}
    for n in view.nodes:
        by_cluster.setdefault(n.cluster, []).append(n)
    rows: dict = {}
    cluster_of = {n.id: n.cluster for n in view.nodes}
    for row in getattr(view, "rows", ()):
        if len({cluster_of.get(i) for i in row}) == 1:
            rows.setdefault(cluster_of.get(row[0]), []).append(row)
    children: dict = {}
    for c in view.clusters:
        children.setdefault(c.parent, []).append(c)

    def emit(container, cluster_id):
        for n in by_cluster.get(cluster_id, ()):
            attrs = dict(_NODE_STYLES.get(n.style, {}))
            if n.mark == "focus":
                attrs["penwidth"] = "3.5"
            container.node(n.id, _html_label(n), **attrs)
        for row in rows.get(cluster_id, ()):  # a chain laid out left to right inside its cluster
            container.body.append("\t{rank=same; " + "; ".join(row) + "}\n")
        for c in children.get(cluster_id, ()):
            with container.subgraph(name=c.id) as sub:
                sub.attr(label=c.label, **_CLUSTER_STYLES[c.kind])
                emit(sub, c.id)

    emit(g, None)
    for e in view.edges:
        attrs = dict(_EDGE_STYLES[e.kind])
        if e.label and e.kind == "cut":  # the cut and its line: bold, a little larger
            attrs["label"] = f'<<b> {_h(e.label)} </b>>'
            attrs["fontsize"] = "10"
        elif e.label:
            attrs["label"] = " " + e.label + " "
        g.edge(e.src, e.dst, **attrs)
    if view.legend:
        with g.subgraph(name="legend") as lg:
            lg.attr(rank="sink")
            lg.node("legend", _legend_label(view.legend), shape="plaintext", margin="0")
    return g
