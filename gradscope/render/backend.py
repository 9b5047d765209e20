"""The only code that runs Graphviz: ``dot`` (through the ``graphviz`` Python package, as
xflr6's graphviz separates a graph's source from its rendering), or the pip-installable
``graphviz-pure`` when ``dot`` is missing. Everything else in :mod:`gradscope.render` is pure
Python and works without either."""
from __future__ import annotations

import os

from ..errors import DotNotFoundError, GradscopeError
from .style import DOT_INSTALL_HINT


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

RENDER_FORMATS = ("svg", "png", "pdf", "jpg", "jpeg")


SOURCE_FORMATS = ("dot", "gv")


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


def pipe(dot, fmt: str, path: str | None = None) -> bytes:
    """Rasterise the ``graphviz.Digraph`` ``dot`` as ``fmt`` with Graphviz's ``dot`` (or
    graphviz-pure); without either, write the DOT source next to ``path`` and raise
    :class:`DotNotFoundError` saying where."""
    graphviz = _import_graphviz()
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
