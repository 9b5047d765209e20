"""Every output format, from plain data (no torch; layer: render).

* the diagram: ``full`` + ``labels`` (every user event as nodes and edges), ``fold`` + ``clusters`` +
  ``build`` (folding, collapsing, clusters: ``build_graph``), ``condense``, ``view`` (the
  :class:`GraphView` data), ``style`` + ``dot`` (DOT text) and ``backend`` (the only code that runs
  Graphviz); import its public API from :mod:`gradscope.graph`;
* :mod:`.report` -- the terminal report and its HTML form (rich renderables from a
  :class:`~gradscope.core.explanation.StepSummary` and the trace data);
* :mod:`.terminal` -- printing explanations, reports and errors to a console (the CLI's and the demo's
  output); :mod:`.timeline` -- the watch's timeline (SVG and text).

Where a new output format goes: a module here that takes plain data (``TraceData``, ``StepSummary``,
``Explanation``, a watch log) and returns text or bytes, never a torch object and never the diagnosis's
internals; the facade (:class:`gradscope.Trace`) or the CLI calls it. Tests compare its output with expected
text (tests/golden).
"""
