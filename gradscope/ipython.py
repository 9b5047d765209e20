"""IPython / Jupyter support: the ``%%gradscope`` cell magic.

In a notebook::

    %load_ext gradscope

    %%gradscope --why x --graph
    y = x * 2
    z = y.detach() * w
    z.sum().backward()

runs the cell under :func:`gradscope.trace`, shows the report (rich HTML in
notebooks), one explanation per ``--why NAME``, the diagram with ``--graph``, and
stores the Trace in the user namespace as ``_gradscope_trace`` (or ``--name VAR``).
An exception in the cell is shown as usual, followed by gradscope's diagnosis; the
cell itself then counts as run.
"""
from __future__ import annotations

import ast
import re
import sys

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

__all__ = ["GradscopeMagics", "load_ipython_extension"]


@magics_class
class GradscopeMagics(Magics):
    """Holds the ``%%gradscope`` cell magic."""

    @magic_arguments()
    @argument("--why", action="append", default=[], metavar="NAME",
              help="explain NAME's gradient after the cell ran (repeatable)")
    @argument("--graph", action="store_true", help="display the gradient-flow diagram")
    @argument("--name", default="_gradscope_trace", metavar="VAR",
              help="store the Trace in this variable (default: _gradscope_trace)")
    @argument("--quiet", action="store_true", help="do not display the report")
    @cell_magic
    def gradscope(self, line, cell):
        """Trace the cell with gradscope and display what happened to the gradients."""
        import gradscope

        args = parse_argstring(self.gradscope, line)
        shell = self.shell
        code = shell.transform_cell(cell)
        filename = shell.compile.cache(code, _cell_number(shell, sys._getframe(1)), raw_code=cell)
        tree = ast.parse(code, filename)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        body = shell.compile(tree, filename, "exec")
        tr = gradscope.trace()
        shell.user_ns[args.name] = tr
        value = None
        try:
            with tr:
                exec(body, shell.user_ns)
                if last is not None:
                    value = eval(shell.compile(last, filename, "eval"), shell.user_ns)
        except KeyboardInterrupt:
            raise
        except Exception as e:
            tb = e.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != filename:
                tb = tb.tb_next  # start at the cell, like IPython does
            if getattr(e, "__notes__", None):  # the diagnosis is shown below, as a panel
                e.__notes__ = [n for n in e.__notes__ if not str(n).startswith("gradscope: ")]
            shell.showtraceback((type(e), e, tb or e.__traceback__))
        else:
            if value is not None:
                shell.displayhook(value)
        _show(tr, args, shell)


def _cell_number(shell, frame) -> int:
    """The execution number of the cell that runs this magic, as IPython shows it (``In[3]``): the number of the
    cell's own code on the stack (``shell.execution_count`` may already count the next one while a cell runs)."""
    fmt = getattr(shell.compile, "format_code_name", None)
    f = frame
    while f is not None and fmt is not None:
        try:
            got = fmt(f.f_code.co_filename)
        except (AttributeError, TypeError, ValueError, KeyError):
            got = None
        m = re.fullmatch(r"In\[(\d+)\]", got[1]) if got else None
        if m:
            return int(m.group(1))
        f = f.f_back
    return shell.execution_count


def _show(tr, args, shell) -> None:
    from IPython.display import display
    from rich.console import Console

    from .render.terminal import print_explanation
    from .cli import why_by_name
    from .errors import GradscopeError

    from .render.report import NotebookConsole, in_notebook

    # in a kernel, rich's Console would put ANSI colour codes into text/plain
    con = NotebookConsole() if getattr(shell, "kernel", None) is not None or in_notebook() else Console()
    if tr.failure is not None:
        con.print("[bold red]gradscope: why the cell failed[/]")
        print_explanation(con, tr.failure)
    if not args.quiet:
        if getattr(shell, "kernel", None) is not None:  # Jupyter: the rich HTML report
            display(tr)
        else:  # terminal IPython: the rich text report
            tr.report(console=con)
    for name in args.why:
        try:
            expl = why_by_name(tr, name, shell.user_ns)
        except GradscopeError as e:
            con.print(f"gradscope: error: {e}", markup=False, highlight=False)
            continue
        con.print(f"[bold]why {name}?[/]")
        print_explanation(con, expl)
    if args.graph:  # SVG in notebooks; text (and the DOT source when `dot` is missing) elsewhere
        display(tr.graph())


def load_ipython_extension(ipython) -> None:
    """``%load_ext gradscope``: register the ``%%gradscope`` cell magic."""
    ipython.register_magics(GradscopeMagics)
