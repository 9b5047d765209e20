"""The watch's data model: per-parameter history in bounded memory, alerts, and the JSON-lines
log on disk. Plain data only (no torch): ``gradscope show run.watch.jsonl`` reads it anywhere.

A step is what happens between two optimizer steps (or two ``Watch.step()`` calls). For each
watched parameter a step records whether a gradient arrived, its norm, whether it was finite,
and whether the parameter changed at ``step()``. The history keeps the last ``window`` steps
per parameter (a ring buffer) and a few counters; memory does not grow with the step count.

>>> h = ParamHistory("fc.weight", window=4)
>>> for s in range(6):
...     _ = h.add(s, received=s < 3, norm=1.0 if s < 3 else None, finite=True, changed=s < 3)
>>> h.last_received, h.n_received, [st.received for st in h.recent()]
(2, 3, [True, False, False, False])
"""
from __future__ import annotations

import json
import math
import os
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from ..core._source import in_installed_package
from ..core.model import Site, TraceFileError

__all__ = ["SCHEMA", "SCHEMA_VERSION", "StepState", "ParamHistory", "Alert", "WatchLog", "read_log", "merge_ranks"]

SCHEMA = "gradscope.watch"
SCHEMA_VERSION = 1


class StepState(NamedTuple):
    """One parameter in one step (a tuple: one is made per parameter per step)."""

    step: int
    received: bool
    norm: float | None  # None when no gradient arrived
    finite: bool
    changed: bool | None  # None when no optimizer step ran in this step


class ParamHistory:
    """One parameter's recent steps (a ring buffer) and its lifetime counters."""

    __slots__ = ("name", "_recent", "first_step", "last_received", "n_received", "first_nonfinite",
                 "unchanged_run", "missing_run")

    def __init__(self, name: str, window: int = 64):
        self.name = name
        self._recent: deque = deque(maxlen=window)
        self.first_step: int | None = None
        self.last_received: int | None = None
        self.n_received = 0
        self.first_nonfinite: int | None = None
        self.unchanged_run = 0  # consecutive steps with a gradient and no change at step()
        self.missing_run = 0  # consecutive steps without a gradient

    def add(self, step: int, *, received: bool, norm, finite: bool, changed) -> StepState:
        st = StepState(step, received, norm, finite, changed)
        self._recent.append(st)
        if self.first_step is None:
            self.first_step = step
        if received:
            self.last_received = step
            self.n_received += 1
            self.missing_run = 0
        else:
            self.missing_run += 1
        if received and not finite and self.first_nonfinite is None:
            self.first_nonfinite = step
        if received and changed is False:
            self.unchanged_run += 1
        elif changed:
            self.unchanged_run = 0
        return st

    def recent(self) -> list:
        return list(self._recent)


@dataclass
class Alert:
    """A trigger that fired: what, for which parameters, at which step, and why (once traced)."""

    kind: str  # one of TRIGGERS' keys
    step: int
    params: list
    message: str
    since: int | None = None  # the last healthy step, when there was one
    # (the long fields stay out of repr: `print(watch.alerts)` shows one short line per alert; str() tells all)
    changes: list = field(default_factory=list, repr=False)  # what changed since the last healthy step
    explanation: dict | None = field(default=None, repr=False)  # the traced step's Explanation.to_json(), when traced
    traced_step: int | None = None
    rank: int | None = None  # the process's rank in a multi-process run (torchrun), else None
    #: for its parameters that are frozen: the user's line that froze them, one entry per line:
    #: {"params", "step" (the watch step the write ran in), "site" (a Site's JSON, its stack the calls that
    #: led there)}; for a write the watch did not see, "site" is None and "unseen" says why
    frozen_at: list = field(default_factory=list, repr=False)

    def __str__(self) -> str:
        who = f"[rank {self.rank}] " if self.rank is not None else ""
        lines = [f"{who}step {self.step}: {self.message}"]
        for c in self.changes:
            lines.append(f"  changed since step {self.since}: {c}")
        for f in self.frozen_at:
            lines.extend(_frozen_lines(f, self.since, self.step))
        return "\n".join(lines + self.why_lines())

    def why_lines(self) -> list:
        """The lines of ``str(alert)`` that come from the traced step's explanation (none until then)."""
        lines = []
        if self.explanation:
            e = self.explanation
            site = e.get("site") or {}
            where = f" ({os.path.basename(site.get('filename', '?'))}:{site.get('lineno')})" if site else ""
            lines.append(f"  why (traced step {self.traced_step}): {e.get('cause')}{where}: {e.get('summary')}")
            if e.get("fix"):
                lines.append(f"  fix: {e['fix']}")
        return lines

    def to_json(self) -> dict:
        return {"alert": self.kind, "step": self.step, "params": list(self.params), "message": self.message,
                "since": self.since, "changes": list(self.changes), "explanation": self.explanation,
                "traced_step": self.traced_step, "rank": self.rank,
                **({"frozen_at": list(self.frozen_at)} if self.frozen_at else {})}

    @classmethod
    def from_json(cls, d: dict) -> Alert:
        return cls(kind=d["alert"], step=int(d["step"]), params=list(d.get("params") or []),
                   message=str(d.get("message", "")), since=d.get("since"), changes=list(d.get("changes") or []),
                   explanation=d.get("explanation"), traced_step=d.get("traced_step"), rank=d.get("rank"),
                   frozen_at=[f for f in d.get("frozen_at") or () if isinstance(f, dict)])


def _names(params) -> str:
    return ", ".join(params[:4]) + (f" and {len(params) - 4} more" if len(params) > 4 else "")


def _frozen_lines(f: dict, since, step) -> list:
    """How one ``Alert.frozen_at`` entry reads: the line that froze the parameters and the user's calls that led
    there (innermost first: the helper's line, then the loop's line that called it)."""
    params = _names(list(f.get("params") or ()))
    at = f.get("step")
    if not f.get("site"):
        start = f"step {at - 1}" if isinstance(at, int) else (f"step {since}" if since is not None else "the start")
        end = f"step {at}" if isinstance(at, int) else f"step {step}"
        return [f"  frozen between {start} and {end}, outside any trace, by a line the watch does not "
                f"see ({params}: {f.get('unseen') or 'not seen'}); run those steps inside `with gradscope.trace():` "
                f"to get the line"]
    try:
        site = Site.from_json(f["site"])
    except (KeyError, TypeError, ValueError):
        return []
    during = f"; in step {at}" if isinstance(at, int) else ""
    lines = [f"  frozen at {site.short} in {site.function}{_code(site.code)} ({params}{during})"]
    outer = list(site.stack[:-1])[::-1]  # the callers, innermost first
    own = [fr for fr in outer if not in_installed_package(fr.filename)]  # (a library's freeze: the user's call into it)
    for fr in (own or (outer[:1] if in_installed_package(site.filename) else []))[:3]:
        lines.append(f"    called from {fr.short} in {fr.function}{_code(fr.code)}")
    return lines


def _code(code: str) -> str:
    """``: code`` without the line's trailing comment ("" when there is no code)."""
    code = (code or "").split("  #")[0].strip()
    return f": {code}" if code else ""


def _num(x):
    """A norm for JSON: 4 significant digits; inf/nan as strings (JSON has neither)."""
    if x is None:
        return None
    if math.isfinite(x):
        return float(f"{x:.4g}")
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _unnum(x):
    if x == "?":  # arrived, norm not measured
        return x
    if isinstance(x, str):
        return float(x)
    return x


class WatchLog:
    """Steps and alerts of one watched run, in memory (bounded) and optionally as JSON lines.

    The file has a header line (schema, version, parameter names), then one line per step
    (``{"step": n, "g": [norm or null per parameter], "c": [indices that did not change]}``)
    and one line per alert. Nothing in it is executed when read (plain JSON).
    """

    def __init__(self, names: list, *, window: int = 64, path=None, meta: dict | None = None):
        self.names = list(names)
        self.window = window
        self.history = {n: ParamHistory(n, window) for n in self.names}
        self.alerts: list = []
        self.steps = 0
        self.meta = dict(meta or {})
        self.path = os.fspath(path) if path is not None else None
        self._fh = None
        if self.path:
            self._fh = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
            self._write({"schema": SCHEMA, "version": SCHEMA_VERSION, "params": self.names, "meta": self.meta})

    def add_params(self, names) -> None:
        """Parameters that appeared after the start (a layer added or unfrozen later)."""
        new = [n for n in names if n not in self.history]
        for n in new:
            self.names.append(n)
            self.history[n] = ParamHistory(n, self.window)
        if new and self._fh:
            self._write({"params_added": new})

    def add_step(self, step: int, arrived: dict, changed: dict | None) -> None:
        """``arrived``: name -> gradient norm, for the parameters a gradient reached (the norm is None
        when it could not be measured); ``changed``: name -> bool, or None when no optimizer step ran."""
        self.steps += 1
        for n in self.names:
            got = n in arrived
            g = arrived.get(n)
            self.history[n].add(step, received=got, norm=g, finite=g is None or math.isfinite(g),
                                changed=None if changed is None else changed.get(n))
        if self._fh:
            rec = {"step": step, "g": [(_num(arrived[n]) if arrived[n] is not None else "?") if n in arrived else None
                                       for n in self.names]}
            if changed is not None:
                rec["c"] = [i for i, n in enumerate(self.names) if changed.get(n) is False]
            self._write(rec)

    def add_alert(self, alert: Alert) -> None:
        self.alerts.append(alert)
        if self._fh:
            self._write(alert.to_json())

    def update_alert(self, alert: Alert) -> None:
        """An alert got its explanation (the traced step ended): written again, later line wins."""
        if self._fh:
            self._write(alert.to_json())

    def _write(self, obj) -> None:
        self._fh.write(json.dumps(obj, allow_nan=False) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh:
            self._fh.close()
            self._fh = None


@dataclass
class Timeline:
    """A whole log read back: per-parameter rows of per-step cells, for the renderers."""

    names: list
    steps: list  # step numbers, in order
    norms: dict  # name -> list of norm or None (aligned with steps; None = no gradient)
    unchanged: dict  # name -> set of steps where a gradient arrived and the parameter did not change
    alerts: list
    meta: dict
    source: str | None = None
    notes: list = field(default_factory=list)  # what reading the log found wrong but could read past (a cut last line)

    @property
    def rank(self):
        return self.meta.get("rank")


def read_log(path) -> Timeline:
    """Read a watch log (JSON lines). Raises TraceFileError with what is wrong and what to do."""
    path = os.fspath(path)
    try:
        fh = open(path, encoding="utf-8")
    except OSError as e:
        raise TraceFileError(f"cannot read the watch log {path}: {e.strerror or e}") from None
    with fh:
        lines = [ln for ln in fh if ln.strip()]
    if not lines:
        raise TraceFileError(f"{path} is empty: it is not a gradscope watch log (write one with gradscope.watch(log=...))")
    try:
        head = json.loads(lines[0])
    except json.JSONDecodeError as e:
        raise TraceFileError(f"{path} is not a gradscope watch log: line 1 is not JSON ({e.msg})") from None
    if not isinstance(head, dict) or head.get("schema") != SCHEMA:
        raise TraceFileError(f"{path} is not a gradscope watch log (its first line has no schema {SCHEMA!r})")
    if head.get("version") != SCHEMA_VERSION:
        raise TraceFileError(f"{path} is a watch log of version {head.get('version')!r}; this gradscope reads "
                             f"version {SCHEMA_VERSION}: upgrade gradscope, or write the log again")
    names = list(head.get("params") or [])
    steps, norms, unchanged, alerts, notes = [], {n: [] for n in names}, {n: set() for n in names}, {}, []
    for no, ln in enumerate(lines[1:], 2):
        try:
            rec = json.loads(ln)
        except json.JSONDecodeError:
            if no == len(lines):  # a run killed while writing its last line: said, and read up to it
                notes.append(f"{os.path.basename(path)}: its last line ({no}) was cut off (the run was killed or is "
                             f"still writing it); read the {no - 2} lines before it")
                break
            raise TraceFileError(f"{path}: line {no} is not JSON; the log is corrupt") from None
        if "params_added" in rec:
            for n in rec["params_added"]:
                if n not in norms:
                    names.append(n)
                    norms[n] = [None] * len(steps)
                    unchanged[n] = set()
        elif "alert" in rec:
            a = Alert.from_json(rec)
            alerts[(a.kind, a.step, tuple(a.params))] = a  # a later line (with its explanation) wins
        elif "step" in rec:
            g = rec.get("g") or []
            steps.append(int(rec["step"]))
            for i, n in enumerate(names):
                norms[n].append(_unnum(g[i]) if i < len(g) else None)
            for i in rec.get("c") or ():
                if 0 <= i < len(names):
                    unchanged[names[i]].add(int(rec["step"]))
    return Timeline(names, steps, norms, unchanged, list(alerts.values()), dict(head.get("meta") or {}), path, notes)


def merge_ranks(tls: list) -> Timeline:
    """One timeline from the logs of the ranks of a multi-process run: a parameter whose gradients
    arrived at the same steps on every rank is shown once; one that differs (unused on some ranks:
    stochastic depth, a conditional branch) is shown per rank, as ``[rank N] name``."""
    if len(tls) == 1:
        return tls[0]
    tls = sorted(tls, key=lambda t: (t.rank is None, t.rank or 0))
    base = tls[0]
    n = min(len(t.steps) for t in tls)
    steps = base.steps[:n]
    names, norms, unchanged = [], {}, {}
    for name in base.names:
        seen = [[v is not None for v in t.norms.get(name, [None] * n)[:n]] for t in tls]
        if all(s == seen[0] for s in seen):
            names.append(name)
            norms[name] = base.norms[name][:n]
            unchanged[name] = set(base.unchanged.get(name, ()))
            continue
        for t in tls:
            label = f"[rank {t.rank}] {name}"
            names.append(label)
            norms[label] = t.norms.get(name, [None] * n)[:n]
            unchanged[label] = set(t.unchanged.get(name, ()))
    alerts = [a for t in tls for a in t.alerts]
    meta = dict(base.meta, ranks=[t.rank for t in tls])
    return Timeline(names, steps, norms, unchanged, alerts, meta, base.source, [x for t in tls for x in t.notes])
