"""The terminal (and notebook) report of a traced step, built with rich.

Layer: render. Takes plain data (:class:`~gradscope.core.model.TraceData`,
:class:`~gradscope.core.explanation.StepSummary`, :class:`~gradscope.core.explanation.Explanation`)
and returns rich renderables or strings; never imports torch or graphviz.

* :class:`TraceReport` -- the whole step: header and verdict, the parameter table,
  the cuts, one panel per problem (with the source line), and what the trace could
  not see. ``print_report(data, summary)`` prints it; ``html_report`` returns HTML.
* :class:`ExplanationPanel` -- one :class:`Explanation` (``tr.why(x)``);
  ``explanation_to_text`` / ``explanation_html`` give it as plain text / HTML.

Everything reads without colour (symbols and words carry the meaning: ``✗ None``,
``❱`` marks the line) and at 60 columns. Colours come from named styles
(``gradscope.bad``, ``gradscope.cut``, ...; see :data:`STYLES`), so a console theme can
override them: ``console.push_theme(Theme({"gradscope.cut": "magenta"}))``.

>>> from gradscope.core.explanation import Explanation
>>> from gradscope.core.model import Site
>>> e = Explanation("detach", Site("t.py", 3, "f", "z = y.detach() * w"), target="x",
...                 summary="x.grad is None: y.detach() at t.py:3 cut x off from the loss.",
...                 fix="use y instead of y.detach()")
>>> print(explanation_to_text(e, width=60))  # doctest: +NORMALIZE_WHITESPACE
x.grad is None: y.detach() at t.py:3 cut x off from the loss.
cause: detach (a .detach() cut the tensor off from autograd)
<BLANKLINE>
t.py:3 in f
❱ 3 │ z = y.detach() * w
<BLANKLINE>
fix:  use y instead of y.detach()
"""
from __future__ import annotations

import io
import linecache
import os
import re
import textwrap

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.padding import Padding
from rich.panel import Panel
from rich.style import Style
from rich.table import Table
from rich.text import Text
from rich.theme import Theme

from ..core import explanation
from ..core.explanation import CAUSES, Explanation, StepSummary
from .labels import cut_label, op_short
from ..core.model import Cause, Event, Site, TraceData, fmt_norm

__all__ = [
    "TraceReport",
    "ExplanationPanel",
    "print_report",
    "explanation_to_text",
    "html_report",
    "explanation_html",
    "STYLES",
    "THEME",
]

#: Named styles used by the report (same colours as the diagram's palette).
STYLES = {
    "gradscope.title": "bold",
    "gradscope.ok": "bold green",
    "gradscope.bad": "bold red",
    "gradscope.cut": "red",
    "gradscope.none": "red",
    "gradscope.zero": "dark_orange",
    "gradscope.nonfinite": "magenta",
    "gradscope.frozen": "bright_black",
    "gradscope.received": "green",
    "gradscope.dim": "dim",
    "gradscope.name": "bold",
    "gradscope.site": "cyan",
    "gradscope.code": "",
    "gradscope.lineno": "dim",
    "gradscope.marker": "bold red",
    "gradscope.hl": "bold",
    "gradscope.label": "bold",
    "gradscope.fix": "green",
    "gradscope.warn": "yellow",
    "gradscope.border.bad": "red",
    "gradscope.border.ok": "green",
    "gradscope.border.unknown": "yellow",
}
#: A rich Theme with :data:`STYLES` (push it to override or reuse the names).
THEME = Theme(STYLES)

#: More rows than this in the parameter table: healthy parameters are folded.
MAX_PARAM_ROWS = 30

_STATUS = {  # status -> (symbol, word, style)
    "received": ("✓", "received", "received"),
    "none": ("✗", "None", "none"),
    "zero": ("✗", "zero", "zero"),
    "nonfinite": ("✗", "inf/nan", "nonfinite"),
    "frozen": ("–", "frozen", "frozen"),
    "not_run": ("?", "no backward", "warn"),
}


class _Styles:
    """Resolves ``gradscope.*`` names on a console, falling back to :data:`STYLES`."""

    def __init__(self, console: Console | None) -> None:
        self.console = console
        self._cache: dict = {}

    def __call__(self, name: str) -> Style:
        s = self._cache.get(name)
        if s is None:
            full = f"gradscope.{name}"
            default = STYLES.get(full, "")
            if self.console is not None:
                s = self.console.get_style(full, default=default or "none")
            else:
                s = Style.parse(default or "none")
            self._cache[name] = s
        return s


_fmt_norm = fmt_norm


def _fmt_shape(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _display_path(filename: str) -> str:
    """A path the user can click: relative to the working directory when under it."""
    if not filename or not os.path.isabs(filename):
        return filename or "?"
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if rel.startswith("..") else rel


def _fit_site(short: str, room: int) -> str:
    """``file.py:12`` in ``room`` columns: the file name shortened from its left (``…name.py:12``) when it does not
    fit, the line number always whole; unchanged when it fits or too little room is left to shorten it."""
    if len(short) <= room:
        return short
    file, sep, line = short.rpartition(":")
    keep = room - len(line) - 2  # (":" and "…")
    if not sep or keep < 6:
        return short
    return f"…{file[-keep:]}:{line}"


def _cause_words(cause: str | None) -> str:
    return (cause or "").replace("_", " ")


# --------------------------------------------------------------------------- source excerpt
def _source_lines(site: Site, context: int = 2) -> list | None:
    """[(lineno, text)] around the site from the file, or None when the file cannot be read
    or no longer matches the recorded line."""
    fn = site.filename
    if not fn or site.lineno <= 0:
        return None
    line = linecache.getline(fn, site.lineno)
    if not line:
        return None
    if site.code and " ".join(site.code.split()) not in " ".join(line.split()) and \
            " ".join(line.split()) not in " ".join(site.code.split()):
        return None  # the file changed since the trace was recorded
    out = []
    for n in range(max(1, site.lineno - context), site.lineno + context + 1):
        text = linecache.getline(fn, n)
        if not text and n > site.lineno:
            break
        out.append((n, text.rstrip("\n").expandtabs(4)))
    while out and out[-1][0] > site.lineno and not out[-1][1].strip():
        out.pop()
    return out


def _excerpt(site: Site, st: _Styles, context: int = 2) -> Group:
    """``model.py:25 in forward`` then the lines around it, the site's line marked ``❱``."""
    t = Text()
    t.append(_display_path(site.filename), st("site"))
    t.append(f":{site.lineno}", st("site"))
    if site.function:
        t.append(f" in {site.function}", st("dim"))
    parts: list = [t]
    lines = _source_lines(site, context)
    if lines is None:
        lines = [(site.lineno, site.code)] if site.code else []
    if lines:
        body = textwrap.dedent("\n".join(text for _, text in lines)).split("\n")
        width = len(str(lines[-1][0]))
        grid = Table.grid(padding=(0, 0))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")  # a long line wraps under itself, not under the number
        for (n, _), text in zip(lines, body):
            here = n == site.lineno
            left = Text()
            left.append("❱ " if here else "  ", st("marker") if here else st("dim"))
            left.append(f"{n:>{width}} │ ", st("lineno"))
            grid.add_row(left, Text(text, st("hl") if here else st("code")))
        parts.append(grid)
    if len(site.stack) >= 2:  # where that line was called from (one frame up)
        caller = site.stack[-2]
        c = Text(f"called from {_display_path(caller.filename)}:{caller.lineno}", st("dim"))
        if caller.code:
            c.append(f": {caller.code}", st("dim"))
        parts.append(c)
    return Group(*parts)


# --------------------------------------------------------------------------- explanation
def _path_table(exp: Explanation, st: _Styles, max_steps: int = 12) -> Table:
    steps = list(exp.path)
    keep = set(range(len(steps)))
    if len(steps) > max_steps:  # first two, last two, and the steps around each cut
        keep = {0, 1, len(steps) - 2, len(steps) - 1}
        for i, s in enumerate(steps):
            if not s.flows or s.note:
                keep |= {i - 1, i, i + 1}
        keep = {i for i in keep if 0 <= i < len(steps)}
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)  # marker
    grid.add_column()  # label + site + note
    skipped = 0
    for i, s in enumerate(steps):
        if i not in keep:
            skipped += 1
            continue
        if skipped:
            grid.add_row(Text("⋮", st("dim")), Text(f"{skipped} more step{'s' if skipped != 1 else ''}",
                                                     st("dim")))
            skipped = 0
        mark = "✗" if not s.flows else ("•" if i == 0 else "→")
        row = Text()
        row.append(s.label, st("cut") if not s.flows else st("name") if i in (0, len(steps) - 1) else "")
        if s.site is not None:
            row.append(f"  {s.site.short}", st("site"))
        if s.note:
            row.append(f"  ← {s.note}", st("cut") if not s.flows else st("dim"))
        grid.add_row(Text(mark, st("cut") if not s.flows else st("dim")), row)
    return grid


def _explanation_parts(exp: Explanation, st: _Styles, also: list = ()) -> list:
    parts: list = []
    head = Text(exp.summary or f"{exp.target}: {exp.cause}", st("title"))
    parts.append(head)
    gloss = CAUSES.get(exp.cause)
    cause = Text()
    cause.append("cause: ", st("label"))
    cause.append(exp.cause, st("bad") if exp.cause not in ("ok", "unknown") else st("ok" if exp.ok else "warn"))
    if gloss:
        cause.append(f" ({gloss})", st("dim"))
    parts.append(cause)
    if also:
        parts.append(Text.assemble(("also: ", st("label")), ", ".join(also)))
    if exp.site is not None:
        parts.append(Text(""))
        parts.append(_excerpt(exp.site, st))
    for s in exp.extra_sites:  # other lines that take part: further cuts, where a module is defined
        parts.append(Text.assemble(("also at: ", st("label")), (s.short, st("dim")), f"  {s.code}" if s.code else ""))
    rows = Table.grid(padding=(0, 1))
    rows.add_column(no_wrap=True, style=st("label"), min_width=5)
    rows.add_column()
    has_rows = False
    if exp.detail:
        rows.add_row("why:", Text(exp.detail))
        has_rows = True
    if exp.path:
        rows.add_row("path:", _path_table(exp, st))
        has_rows = True
    if exp.fix:
        rows.add_row(Text("fix:", st("fix") + st("label")), Text(exp.fix, st("fix")))
        has_rows = True
    if exp.verification:
        rows.add_row("check:", Text(exp.verification, st("ok") if exp.verified == "verified" else st("warn")))
        has_rows = True
    if has_rows:
        parts.append(Text(""))
        parts.append(rows)
    return parts


class ExplanationPanel:
    """A rich panel for one :class:`Explanation`: the sentence, the cause, the source line
    (``❱`` marks it, ±2 lines of context when the file is readable), why, the path to the
    loss with the cut marked ``✗``, and the fix."""

    def __init__(self, exp: Explanation, *, title: str | None = None, also: list = ()) -> None:
        self.exp = exp
        self.title = title
        self.also = list(also)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        st = _Styles(console)
        exp = self.exp
        border = "border.ok" if exp.ok else ("border.unknown" if exp.cause == "unknown" else "border.bad")
        title = self.title or exp.cause
        yield Panel(Group(*_explanation_parts(exp, st, self.also)), title=Text(title, st("title")),
                    title_align="left", border_style=st(border), box=box.ROUNDED, padding=(0, 1), expand=True)


def _render_text(renderable, width: int) -> str:
    con = Console(width=width, file=io.StringIO(), color_system=None, force_terminal=False,
                  force_jupyter=False, legacy_windows=False, record=False, highlight=False, soft_wrap=False)
    con.print(renderable)
    return "\n".join(line.rstrip() for line in con.file.getvalue().rstrip("\n").split("\n"))


def explanation_to_text(exp: Explanation, width: int = 80) -> str:
    """One explanation as plain text (no colour, no box), ``width`` columns wide."""
    return _render_text(Group(*_explanation_parts(exp, _Styles(None))), width)


def _html(renderable, width: int) -> str:
    con = Console(width=width, file=io.StringIO(), record=True, color_system="truecolor", force_terminal=True,
                  force_jupyter=False, legacy_windows=False, theme=THEME)
    con.print(renderable)
    return con.export_html(
        inline_styles=True,
        code_format=('<pre style="font-family:Menlo,\'DejaVu Sans Mono\',consolas,\'Courier New\',monospace;'
                     'line-height:1.25">{code}</pre>'))


class NotebookConsole:
    """What ``console.print`` is for the front ends inside Jupyter: each print becomes one
    display with plain ``text/plain`` (no ANSI escape codes: a rich Console in a kernel puts
    its terminal colours there) and inline-styled ``text/html``."""

    def __init__(self, width: int = 100) -> None:
        self.width = width

    def print(self, *objects, markup: bool = True, highlight: bool = False, **_kw) -> None:
        from IPython.display import display  # noqa: PLC0415  (only ever used inside IPython)

        parts = [Text(o) if isinstance(o, str) and not markup else
                 (Text.from_markup(o) if isinstance(o, str) else o) for o in objects]
        r = parts[0] if len(parts) == 1 else Group(*parts)
        display({"text/plain": _render_text(r, self.width), "text/html": _html(r, self.width)}, raw=True)


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where rich's Console would write ANSI into text/plain)."""
    return bool(Console(file=io.StringIO()).is_jupyter)


def explanation_html(exp: Explanation, width: int = 100) -> str:
    """One explanation as an HTML fragment (inline styles), for Jupyter."""
    return _html(ExplanationPanel(exp), width)


# --------------------------------------------------------------------------- report
def _merge_problems(exps: list) -> list:
    """[(Explanation, [other targets])]: explanations with the same cause, site and fix once."""
    out: list = []
    index: dict = {}
    for x in exps:
        key = (x.cause, x.site.short if x.site else None, x.site.code if x.site else None, x.fix)
        if key in index and x.cause != "ok":
            out[index[key]][1].append(x.target)
        else:
            index[key] = len(out)
            out.append((x, []))
    return out


class TraceReport:
    """The whole traced step as a rich renderable (``console.print(TraceReport(data, summary))``).

    Header (ops, backward roots, optimizer steps) and verdict; the parameters with their
    gradient (healthy rows folded past :data:`MAX_PARAM_ROWS`); the harmful cuts and a
    folded line for the benign ones; one panel per problem; what the trace could not see.
    """

    def __init__(self, data: TraceData, summary: StepSummary, *, max_params: int = MAX_PARAM_ROWS) -> None:
        self.data = data
        self.summary = summary
        self.max_params = max_params

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        st = _Styles(console)
        width = options.max_width
        yield self._header(st, width)
        if self.summary.params:
            yield Text("")
            yield self._params(st, width)
        cuts = self._cuts(st, width)
        if cuts is not None:
            yield Text("")
            yield cuts
        exps = ([self.summary.failure] if self.summary.failure is not None else []) + list(self.summary.problems)
        merged = _merge_problems(exps)
        for i, (x, also) in enumerate(merged, 1):
            yield Text("")
            if x is self.summary.failure:
                title = f"{self._failure_title()} · {x.cause}"
            else:
                title = f"problem {i - (1 if self.summary.failure is not None else 0)} of " \
                        f"{len(merged) - (1 if self.summary.failure is not None else 0)} · {x.cause}"
            yield ExplanationPanel(x, title=title, also=also)
        notes = list(dict.fromkeys(list(self.summary.unseen) + list(self.data.unseen)))
        if self.data.truncated and not any("stopped" in n for n in notes):
            notes.append("the recording stopped early (truncated); later calls are not in the trace")
        if notes:
            yield Text("")
            yield Text("What the trace could not see", st("title"))
            for n in notes:
                yield Padding(Text(f"• {n}", st("dim")), (0, 0, 0, 1))

    # --- parts ---------------------------------------------------------------------------
    def _header(self, st: _Styles, width: int) -> Group:
        s = self.summary
        segs = [Text("gradscope", st("title")), Text(f"{s.n_ops} op{'s' if s.n_ops != 1 else ''} recorded")]
        if s.n_backward:
            roots = ", ".join(dict.fromkeys(s.backward_roots)) or "?"  # (a loop backwards from `loss` each step)
            segs.append(Text(f"backward from {roots}" + (f" ({s.n_backward}x)" if s.n_backward > 1 else "")))
        else:
            segs.append(Text("no backward ran", st("warn")))
        if s.n_optimizer_steps:
            segs.append(Text(f"{s.n_optimizer_steps} optimizer step{'s' if s.n_optimizer_steps != 1 else ''}"))
        line = _join_segments(segs, width, st)
        n_problems = len(s.problems) + (1 if s.failure is not None else 0)
        verdict = s.verdict or (f"{n_problems} problem{'s' if n_problems != 1 else ''}" if n_problems else "OK")
        v = Text()
        if s.ok and n_problems == 0:
            v.append("✓ ", st("ok"))
            v.append(verdict, st("ok"))
        else:
            v.append("✗ ", st("bad"))
            v.append(verdict, st("bad"))
        parts = [line, v]
        exc = self.data.exception
        if exc is not None and s.failure is None:
            parts.append(Text.assemble(("the traced block raised ", st("dim")), (f"{exc.type}: ", st("bad")),
                                       textwrap.shorten(exc.message, 200)))
        return Group(*parts)

    def _failure_title(self) -> str:
        """"backward failed" when backward (or autograd.grad) raised, else what the block raised."""
        exc, ev = self.data.exception, self.data.events
        if exc is not None and exc.event is not None and 0 <= exc.event < len(ev) and ev[exc.event].kind == "backward":
            return "backward failed"
        return f"the step raised {exc.type}" if exc is not None else "the step failed"

    def _params(self, st: _Styles, width: int) -> Table:
        params = list(self.summary.params)

        def healthy(p) -> bool:  # (what no optimizer holds is not trained: a freeze of it, or no gradient, is intended)
            return (p.status == "received" or (p.status == "frozen" and (p.cause is None or not p.trainable))
                    or (p.status == "none" and not p.trainable and p.cause is None)
                    or p.cause == Cause.GRADIENT_CANCELLED)

        rows: list = [(p, 1, None) for p in params]  # (param, how many it stands for, last name)
        folded_ok = folded_frozen = 0
        if len(params) > self.max_params:
            bad = [p for p in params if not healthy(p)]
            bad_rows = [(p, 1, None) for p in bad]
            if len(bad) > self.max_params - 2:  # too many to list: one row per (status, cause, site)
                groups: dict = {}
                for p in bad:
                    groups.setdefault((p.status, p.cause, p.site.short if p.site else None), []).append(p)
                bad_rows = []
                for members in groups.values():
                    if len(members) > 3:
                        bad_rows.append((members[0], len(members), members[-1].name))
                    else:
                        bad_rows.extend((p, 1, None) for p in members)
            room = max(self.max_params - len(bad_rows) - 1, 0)
            shown_ok = set()
            for p in params:
                if healthy(p) and len(shown_ok) < room:
                    shown_ok.add(p.tid)
            rows = bad_rows + [(p, 1, None) for p in params if p.tid in shown_ok]
            for p in params:
                if healthy(p) and p.tid not in shown_ok:
                    if p.status == "frozen":
                        folded_frozen += 1
                    else:
                        folded_ok += 1
        # broken parameters first (in recording order), then the healthy ones
        rows = [r for r in rows if not healthy(r[0])] + [r for r in rows if healthy(r[0])]
        narrow = width < 80
        n_bad = sum(1 for p in params if not healthy(p))
        title = Text()
        title.append(f"Parameters ({len(params)})", st("title"))
        if n_bad:
            title.append(f" · {n_bad} without a healthy gradient", st("bad"))
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                      expand=False, header_style=st("label"), padding=(0, 1))
        longest = max((len(r[0].name) + (3 + len(r[2] or "") if r[1] > 1 else 0) for r in rows), default=9)
        # longer names wrap after a dot (wrap_name); a narrow report leaves the cause ~22 columns
        name_w = min(longest, max(min(width // 2, width - 35) if narrow else width // 2, 12))
        shape_w = max((len(_fmt_shape(r[0].shape)) for r in rows), default=5)
        # names never break; at narrow widths the shape goes first when the cause has no room
        show_shape = not narrow or name_w + shape_w + 10 + 22 + 4 <= width
        table.add_column("parameter", no_wrap=True, min_width=name_w, max_width=name_w)
        if show_shape:
            table.add_column("shape", no_wrap=True)
        table.add_column("gradient", no_wrap=True)
        if not narrow:
            table.add_column("norm", justify="right", no_wrap=True)
        table.add_column("cause", overflow="fold")
        # the cause column's room, so that a site too long for it is shortened from the left of its file name
        # (`…_bug_long_name.py:6`), never folded inside its line number
        grad_w = 10 if narrow else 12
        norm_w = 0 if narrow else max((len(_fmt_norm(r[0].norm)) for r in rows if r[0].norm is not None),
                                      default=4) + 2
        cause_w = width - name_w - (shape_w + 2 if show_shape else 0) - grad_w - norm_w - 5  # (a margin: rich's own sizing)
        for p, count, last in rows:
            sym, word, style = _STATUS.get(p.status, ("?", p.status, "warn"))
            if p.cause == Cause.GRADIENT_CANCELLED:  # exactly zero by the loss's own form: not a problem
                sym, word, style = "✓", "zero", "received"
            elif p.status == "none" and not p.trainable and p.cause is None:  # (not trained in this step)
                sym, word, style = "–", "None", "dim"
            grad = Text(f"{sym} {word}", st(style))
            norm = _fmt_norm(p.norm) if p.status in ("received", "nonfinite", "zero") else ""
            cause = Text()
            if p.cause and not healthy(p):
                cause.append(_cause_words(p.cause), st("cut") if p.status in ("none", "zero", "nonfinite")
                             else st("dim"))
                if p.site is not None:
                    cause.append(f" @ {_fit_site(p.site.short, cause_w - 2)}", st("site"))
            elif p.cause == Cause.GRADIENT_CANCELLED:
                cause.append("its uses cancel (by design)", st("dim"))
            elif p.status == "frozen" or not p.trainable:
                cause.append("not trained" if p.status != "frozen" or p.cause else "", st("dim"))
                if p.status == "frozen" and p.cause and p.site is not None:  # (where it was frozen)
                    cause.append(f" @ {_fit_site(p.site.short, cause_w - 2)}", st("site"))
            if narrow and norm and p.status == "received":  # "✓ 0.576": the norm says it arrived
                grad = Text(f"{sym} {norm}", st(style))
            shape = _fmt_shape(p.shape)
            label = p.name
            if count > 1:  # a group of parameters with the same problem: "first … last (N)"
                label = f"{p.name} … {last}"
                shape = f"{count} params"
                norm = ""
            lines = wrap_name(label, name_w)
            if count > 1 and len(lines) > 1:  # break at the ellipsis: each name whole
                lines = wrap_name(f"{p.name} …", name_w) + wrap_name(last, name_w)
            if count > 1 and not show_shape:
                lines.append(f"({count} params)")
            name = Text("\n".join(lines), st("name") if not healthy(p) else "")
            cells = [name] + ([shape] if show_shape else []) + [grad] + ([norm] if not narrow else []) + [cause]
            table.add_row(*cells)
        if folded_ok or folded_frozen:
            more = []
            if folded_ok:
                more.append(f"{folded_ok} more with gradients")
            if folded_frozen:
                more.append(f"{folded_frozen} more frozen")
            return Group(table, Text("… and " + ", ".join(more), st("dim")))
        return table

    def _cuts(self, st: _Styles, width: int):
        s = self.summary
        harmful = list(s.harmful_cuts)
        benign = list(s.benign_cuts)
        if not harmful and not benign:
            return None
        parts = []
        if harmful and width < 80:  # narrow: one cut per two lines, the code indented below
            parts.append(Text(f"Cuts that stop gradients ({len(harmful)})", st("title")))
            for e in harmful:
                grid = Table.grid(padding=(0, 0))
                grid.add_column(no_wrap=True)
                grid.add_column(overflow="fold")
                grid.add_row(Text("✗ ", st("cut")), Text.assemble((_cut_name(e), st("cut")), "  ",
                                                                  (e.site.short if e.site else "?", st("site"))))
                if _code(e):
                    grid.add_row("", Text(_code(e), st("dim")))
                parts.append(grid)
        elif harmful:
            title = Text()
            title.append(f"Cuts that stop gradients ({len(harmful)})", st("title"))
            table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                          header_style=st("label"), padding=(0, 1))
            table.add_column("cut", no_wrap=True, style=st("cut"))
            table.add_column("where", no_wrap=True, style=st("site"))
            table.add_column("code", overflow="fold")
            for e in harmful:
                table.add_row(_cut_name(e), e.site.short if e.site else "?", Text(_code(e)))
            parts.append(table)
        if benign:
            where: dict = {}  # "item() @ train.py:42" -> how many times
            for e in benign:
                key = f"{_cut_name(e)} @ {e.site.short if e.site else '?'}"
                where[key] = where.get(key, 0) + 1
            shown = list(where.items())[:3]
            t = Text()
            t.append(f"{len(benign)} benign cut{'s' if len(benign) != 1 else ''}", st("dim") + st("label"))
            t.append(" (harmless, e.g. logging): ", st("dim"))
            t.append(", ".join(k + (f" (x{n})" if n > 1 else "") for k, n in shown), st("dim"))
            if len(where) > len(shown):
                t.append(f", … {len(where) - len(shown)} more place{'s' if len(where) - len(shown) != 1 else ''}",
                         st("dim"))
            parts.append(t)
        return Group(*parts)


def wrap_name(name: str, width: int) -> list:
    """A dotted name in lines of at most ``width`` characters, broken after a dot (or a
    space) so every part stays whole; a part longer than a line keeps its start and end
    around an ellipsis. ``wrap_name("encoder.layer.11.attention.self.query.weight", 24)``
    -> ``["encoder.layer.11.", "attention.self.query.", "weight"]``."""
    width = max(width, 8)
    if len(name) <= width:
        return [name]
    parts = re.findall(r"[^. ]+(?:\.|\s+)?|[. ]+", name)
    lines: list = []
    cur = ""
    for part in parts:
        if len(part) > width:  # one part alone is too long: shorten its middle
            keep = width - 1
            part = part[: (keep + 1) // 2] + "…" + part[len(part) - keep // 2:]
        if cur and len(cur) + len(part.rstrip()) > width:
            lines.append(cur.rstrip())
            cur = ""
        cur += part
    if cur.strip():
        lines.append(cur.rstrip())
    return lines


def _join_segments(segs: list, width: int, st: _Styles) -> Text:
    """``a · b · c``, breaking lines between segments (never inside one) to fit ``width``."""
    out = Text()
    col = 0
    for i, seg in enumerate(segs):
        if i:
            if col + 3 + len(seg) > width:
                out.append("\n")
                col = 0
            else:
                out.append(" · ", st("dim"))
                col += 3
        out.append_text(seg)
        col += len(seg)
    return out


def _cut_name(e: Event) -> str:
    return cut_label(e) if e.kind == "cut" else op_short(e.op)


def _code(e: Event) -> str:
    """The cut's line, without a trailing ``  # comment``."""
    if not e.site or not e.site.code:
        return ""
    return " ".join(re.sub(r"\s{2,}#.*$", "", e.site.code).split())


# --------------------------------------------------------------------------- entry points
def print_report(data: TraceData, summary: StepSummary, console: Console | None = None, *,
                 width: int | None = None) -> None:
    """Print the report of a traced step (``tr.report()``) to ``console`` (default: stdout,
    ``width`` columns: the terminal's when None)."""
    if width is not None and (not isinstance(width, int) or isinstance(width, bool) or width < 20):
        from ..errors import GradscopeError  # noqa: PLC0415

        raise GradscopeError(f"report(width={width!r}): width must be a whole number of columns, 20 or more")
    if console is None and in_notebook():
        console = NotebookConsole(width or 100)
    if console is None:
        console = Console(highlight=False, width=width)
    elif width is not None and isinstance(console, Console):
        console.print(TraceReport(data, summary), width=width)
        return
    console.print(TraceReport(data, summary))


def html_report(data: TraceData, summary: StepSummary, width: int = 100) -> str:
    """The report as an HTML fragment with inline styles, for Jupyter (``display(HTML(...))``)."""
    return _html(TraceReport(data, summary), width)


explanation.RENDERERS.update(rich=ExplanationPanel, html=explanation_html)
