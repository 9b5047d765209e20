"""What the command line, the demo and the IPython magic print: an explanation panel, and a
diagram written to a file with a note saying where it went.

It sits below ``cli``, ``demo`` and ``ipython`` (each of them uses it) and above the renderers,
so none of those front ends needs to import another.
"""
from __future__ import annotations

import os

from ..errors import DotNotFoundError, GradscopeError

__all__ = ["print_explanation", "write_diagram"]


def print_explanation(console, expl) -> None:
    """Print an Explanation as the report module's panel."""
    from .report import ExplanationPanel

    console.print(ExplanationPanel(expl))


def write_diagram(tr, out: str, console, **kw) -> str:
    """Render ``tr``'s diagram to ``out`` (format from the extension) and say where it went.

    Without Graphviz's ``dot`` the DOT source is written next to ``out`` (``.dot``) and the
    message says so; returns the path actually written. A path that cannot be written raises
    :class:`GradscopeError`.
    """
    try:
        written = tr.graph(**kw).render(out)
    except OSError as e:
        raise GradscopeError(f"cannot write the diagram to {out}: {e.strerror or e}") from None
    except DotNotFoundError as e:
        console.print(f"gradscope: {e}", highlight=False, markup=False)
        return os.path.splitext(out)[0] + ".dot"
    console.print(f"gradscope: diagram written to {written}", highlight=False, markup=False)
    return written
