"""The renderer of diagrams, in seams: ``full`` + ``labels`` (every user event as nodes and
edges), ``fold`` + ``clusters`` + ``build`` (folding, collapsing, clusters: ``build_graph``),
``view`` (the :class:`GraphView` data), ``style`` + ``dot`` (DOT text) and ``backend`` (the
only code that runs Graphviz). Import the public API from :mod:`gradscope.graph`.

Layer: render. Never imports torch.
"""
