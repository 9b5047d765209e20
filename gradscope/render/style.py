"""How the diagram looks: one palette and the Graphviz attributes of every node, edge and
cluster style (the terminal report uses the same colour names)."""
from __future__ import annotations

#: One palette for the diagram; :mod:`gradscope.render.report` uses the same colour names so
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
    # a parameter this step does not train (no optimizer holds it: a target network, an EMA teacher)
    "param_untrained": {"shape": "ellipse", "style": "filled,dashed", "fillcolor": _P["frozen_fill"],
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
    "param_untrained": ("box", _P["frozen_fill"], _P["frozen"]),
    "module": ("box", _P["module_fill"], _P["module_border"]),
    "repeat": ("box", "#ffffff", "#4a5a70"),
}


_STATUS_LINE_COLOR = {"param_none": _P["none"], "param_zero": _P["zero"], "param_nonfinite": _P["nonfinite"],
                      "param_received": _P["received"]}
