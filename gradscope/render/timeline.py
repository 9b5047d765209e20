"""Pictures of a watched run, from plain data (a :class:`~gradscope.watch.log.Timeline`): a rich
table (one row per module, one column per group of steps) and an SVG heat map with the alerts
marked. Which layers stopped learning, and when, should be visible at a glance.

>>> from gradscope.watch.log import Timeline
>>> tl = Timeline(["enc.weight", "enc.bias", "head.weight"], [0, 1, 2, 3],
...               {"enc.weight": [1.0, 1.0, None, None], "enc.bias": [0.5, 0.5, None, None],
...                "head.weight": [2.0, 2.0, 2.0, 2.0]}, {"enc.weight": set(), "enc.bias": set(),
...                "head.weight": set()}, [], {})
>>> [(r.label, "".join(r.cells)) for r in timeline_rows(tl, columns=4)]
[('enc', '██··'), ('head', '████')]
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass

from ..watch.log import Timeline

__all__ = ["timeline_rows", "TimelineTable", "timeline_svg", "CELL"]

#: one character per cell: every step received, some did, none did, a non-finite gradient,
#: received but the parameter never changed at step()
CELL = {"all": "█", "some": "▒", "none": "·", "nonfinite": "!", "unchanged": "="}


@dataclass
class Row:
    label: str
    params: list
    cells: list  # one CELL value per column
    norms: list  # per column: mean log10 norm of what arrived, or None
    last_norm: float | None
    state: str  # "ok", "stopped", "never", "nonfinite", "unchanged"


def _module(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


def _value(v):
    """A logged norm as a number (or None when nothing arrived, nan when it arrived unmeasured)."""
    if v is None:
        return None
    if v == "?":
        return math.nan
    return float(v)


def timeline_rows(tl: Timeline, columns: int = 40) -> list:
    """One row per module (its parameters together), ``columns`` groups of steps at most."""
    n = len(tl.steps)
    width = max(1, math.ceil(n / max(1, columns)))
    groups: dict = {}
    for name in tl.names:
        groups.setdefault(_module(name), []).append(name)
    rows = []
    for label, params in groups.items():
        cells, lognorms = [], []
        for c in range(0, n, width):
            got = bad = total = 0
            unchanged = True
            logs = []
            for name in params:
                for k in range(c, min(c + width, n)):
                    total += 1
                    v = _value(tl.norms[name][k])
                    if v is None:
                        unchanged = False
                        continue
                    got += 1
                    if math.isinf(v) or (math.isnan(v) and tl.norms[name][k] != "?"):
                        bad += 1
                    elif v > 0 and math.isfinite(v):
                        logs.append(math.log10(v))
                    if tl.steps[k] not in tl.unchanged.get(name, ()):
                        unchanged = False
            if bad:
                cells.append(CELL["nonfinite"])
            elif got == 0:
                cells.append(CELL["none"])
            elif got == total and unchanged:
                cells.append(CELL["unchanged"])
            elif got == total:
                cells.append(CELL["all"])
            else:
                cells.append(CELL["some"])
            lognorms.append(sum(logs) / len(logs) if logs else None)
        last = None
        for name in params:
            vals = [_value(v) for v in tl.norms[name] if v is not None]
            if vals and vals[-1] == vals[-1]:
                last = (last or 0.0) + vals[-1] ** 2
        last = math.sqrt(last) if last is not None else None
        state = "ok"
        if CELL["nonfinite"] in cells:
            state = "nonfinite"
        elif cells and all(x == CELL["none"] for x in cells):
            state = "never"
        elif cells and cells[-1] == CELL["none"]:
            state = "stopped"
        elif cells and cells[-1] == CELL["unchanged"]:
            state = "unchanged"
        rows.append(Row(label, params, cells, lognorms, last, state))
    order = {"nonfinite": 0, "stopped": 1, "never": 2, "unchanged": 3, "ok": 4}
    return sorted(rows, key=lambda r: order[r.state])  # broken modules first (stable: model order within)


_STATE_STYLE = {"ok": "green", "stopped": "bold red", "never": "bold red", "nonfinite": "bold magenta",
                "unchanged": "bold yellow"}


class TimelineTable:
    """A rich renderable: the per-module timeline, a legend and the alerts."""

    def __init__(self, tl: Timeline, columns: int | None = None):
        self.tl = tl
        self.columns = columns

    def __rich_console__(self, console, options):
        from rich.table import Table
        from rich.text import Text

        tl = self.tl
        cols = self.columns or max(8, min(60, options.max_width - 40))
        rows = timeline_rows(tl, cols)
        first, last = (tl.steps[0], tl.steps[-1]) if tl.steps else (0, 0)
        yield Text(f"gradient flow over steps {first}-{last} ({len(tl.steps)} steps), one row per module:",
                   style="bold")
        t = Table(show_edge=False, pad_edge=False)
        t.add_column("module", overflow="fold")
        t.add_column("status")
        t.add_column("steps", no_wrap=True)
        t.add_column("last norm", justify="right")
        for r in rows:
            cells = Text()
            for ch in r.cells:
                style = {"·": "red", "!": "magenta", "=": "yellow", "▒": "yellow"}.get(ch, "green")
                cells.append(ch, style=style)
            t.add_row(Text(r.label), Text(r.state, style=_STATE_STYLE[r.state]), cells,
                      "-" if r.last_norm is None else f"{r.last_norm:.3g}")
        yield t
        yield Text("█ gradient every step  ▒ some steps  · none  ! non-finite  = received but unchanged at step()",
                   style="dim")
        for a in tl.alerts:
            yield Text(str(a))


def timeline_svg(tl: Timeline, columns: int = 200, cell: int = 6, row_h: int = 16) -> str:
    """An SVG heat map: one row per module, colour = log10 gradient norm, red = no gradient,
    black = non-finite, alerts as vertical lines with their step and kind."""
    rows = timeline_rows(tl, columns)
    ncols = max((len(r.cells) for r in rows), default=0)
    label_w = 8 * max((len(r.label) for r in rows), default=4) + 16
    width = label_w + ncols * cell + 20
    height = 40 + len(rows) * row_h + 40
    logs = [v for r in rows for v in r.norms if v is not None]
    lo, hi = (min(logs), max(logs)) if logs else (0.0, 1.0)
    span = (hi - lo) or 1.0
    n = len(tl.steps)
    per = max(1, math.ceil(n / max(1, columns)))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="8" y="18" font-size="14">gradient flow: steps {tl.steps[0] if n else 0}-'
           f'{tl.steps[-1] if n else 0} (each column {per} step{"s" if per > 1 else ""}); '
           'colour = gradient norm (log), red = no gradient, black = non-finite</text>']
    for y, r in enumerate(rows):
        top = 30 + y * row_h
        colour = "#b00" if r.state != "ok" else "#000"
        out.append(f'<text x="8" y="{top + row_h - 4}" fill="{colour}">{html.escape(r.label)}</text>')
        for x, (ch, v) in enumerate(zip(r.cells, r.norms)):
            if ch == CELL["none"]:
                fill = "#e33"
            elif ch == CELL["nonfinite"]:
                fill = "#000"
            elif v is None:
                fill = "#9c9"
            else:
                t = (v - lo) / span  # light (small) to dark (large) blue-green
                fill = f"rgb({int(200 - 170 * t)},{int(225 - 120 * t)},{int(255 - 100 * t)})"
            if ch == CELL["unchanged"]:
                fill = "#fc3"
            out.append(f'<rect x="{label_w + x * cell}" y="{top}" width="{cell}" height="{row_h - 3}" fill="{fill}"/>')
    base = 30 + len(rows) * row_h
    for a in tl.alerts:
        if a.step in tl.steps:
            x = label_w + (tl.steps.index(a.step) // per) * cell
            out.append(f'<line x1="{x}" y1="26" x2="{x}" y2="{base}" stroke="#b00" stroke-dasharray="3,2"/>')
            out.append(f'<text x="{x + 2}" y="{base + 14}" fill="#b00">step {a.step}: {html.escape(a.kind)}</text>')
    out.append(f'<text x="{label_w}" y="{base + 30}" fill="#555">step {tl.steps[0] if n else 0}</text>')
    out.append(f'<text x="{label_w + ncols * cell - 60}" y="{base + 30}" fill="#555">step {tl.steps[-1] if n else 0}</text>')
    if logs:
        out.append(f'<text x="{label_w + 90}" y="{base + 30}" fill="#555">norm {10 ** lo:.2g} (light) to '
                   f'{10 ** hi:.2g} (dark); yellow = received but unchanged at step()</text>')
    out.append("</svg>")
    return "\n".join(out)
