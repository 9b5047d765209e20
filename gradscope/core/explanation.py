"""Explanations as data: cause, site, summary, detail, fix, path, evidence.

Built by :mod:`gradscope.diagnosis`, rendered by :mod:`gradscope.render.report` (rich) or
``str()`` (plain text). No torch imports.

>>> from gradscope.core.model import Site
>>> e = Explanation("detach", Site("t.py", 3, "f", "z = y.detach() * w"), target="x",
...                 summary="x.grad is None: y.detach() at t.py:3 cut x off from the loss.",
...                 fix="use y instead of y.detach()")
>>> print(str(e).splitlines()[0])
x.grad is None: y.detach() at t.py:3 cut x off from the loss.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .model import Cause, Event, Site

__all__ = ["CAUSES", "Cause", "Explanation", "PathStep"]

#: How an Explanation draws itself in a rich console ("rich") and a notebook ("html"). The
#: renderers live above this module (gradscope.render.report fills this when it is imported, which
#: ``import gradscope`` does), so the data model never imports them.
RENDERERS: dict = {}

#: Every cause an Explanation can name, with a one-line gloss (a view of :class:`~gradscope.core.model.Cause`).
CAUSES = {str(c): c.gloss for c in Cause.causes()}


@dataclass(slots=True)
class PathStep:
    """One step on the data path from the target to the loss."""

    label: str  # tensor name or op, in the user's words
    op: str | None = None
    site: Site | None = None
    flows: bool = True  # does gradient flow through this step?
    note: str = ""  # e.g. "cut here: detach()"

    def __str__(self) -> str:
        where = f" @ {self.site.short}" if self.site else ""
        mark = "" if self.flows else "  x  "
        note = f"  <- {self.note}" if self.note else ""
        return f"{mark}{self.label}{where}{note}"


@dataclass(slots=True)
class Explanation:
    """Why a gradient is what it is (or why backward failed), in the user's names."""

    cause: str
    site: Site | None = None
    target: str = ""
    summary: str = ""
    detail: str = ""
    fix: str = ""
    path: list = field(default_factory=list)  # PathStep
    evidence: list = field(default_factory=list)  # Event
    status: str = ""  # gradient status: "none" | "zero" | "nonfinite" | "received" | "error"
    extra_sites: list = field(default_factory=list)  # Site: further lines that take part (other cuts, a definition)
    rule: str = ""  # the diagnosis rule that decided it (gradscope.diagnosis.ORDER)
    # what Trace.verify found by re-running the step with cuts undone: "verified" (undoing the named line
    # restored it), "no_single_undo", "not_verified" (nothing could be tried), "not_repeatable"; "" when
    # not verified at all. ``verification``: the sentence that says so.
    verified: str = ""
    verification: str = ""

    @property
    def ok(self) -> bool:
        return self.cause == "ok"

    def __str__(self) -> str:
        lines = [self.summary or f"{self.target}: {self.cause}"]
        lines.append(f"  cause: {self.cause}")
        if self.site is not None:
            lines.append(f"  where: {self.site.short} in {self.site.function}")
            if self.site.code:
                lines.append(f"         {self.site.code}")
        for s in self.extra_sites:
            lines.append(f"  also:  {s.short} in {s.function}" + (f": {s.code}" if s.code else ""))
        if self.detail:
            lines.append(f"  why:   {self.detail}")
        if self.path:
            lines.append("  path:  " + "  ->  ".join(s.label + ("" if s.flows else " [cut]") for s in self.path))
        if self.fix:
            lines.append(f"  fix:   {self.fix}")
        if self.verification:
            lines.append(f"  check: {self.verification}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        where = f" at {self.site.short}" if self.site else ""
        return f"<Explanation {self.cause}{where}: {self.summary!r}>"

    def __rich__(self):
        render = RENDERERS.get("rich")
        return render(self) if render else str(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        render = RENDERERS.get("html")
        bundle = {"text/plain": str(self)}
        if render:
            bundle["text/html"] = render(self)
        return bundle

    def to_json(self) -> dict:
        return {
            "target": self.target,
            "cause": self.cause,
            "status": self.status,
            "site": self.site.to_json() if self.site else None,
            "summary": self.summary,
            "detail": self.detail,
            "fix": self.fix,
            "path": [
                {"label": s.label, "op": s.op, "site": s.site.to_json() if s.site else None,
                 "flows": s.flows, "note": s.note}
                for s in self.path
            ],
            "evidence": [e.index for e in self.evidence if isinstance(e, Event)],
            "extra_sites": [s.to_json() for s in self.extra_sites],
            **({"verified": self.verified, "verification": self.verification} if self.verified else {}),
        }


@dataclass(slots=True)
class ParamStatus:
    """One row of the parameter table: a parameter (or queried leaf) and its gradient."""

    name: str
    tid: int
    shape: tuple
    status: str  # "received" | "none" | "zero" | "nonfinite" | "frozen" | "not_run"
    norm: float | None = None
    trainable: bool = True  # in an optimizer that stepped (or requires grad when no optimizer ran)
    cause: str | None = None  # for a problem: the Explanation's cause
    site: Site | None = None


@dataclass(slots=True)
class StepSummary:
    """What a traced step did and what went wrong, ready for rendering (plain data).

    Built by :func:`gradscope.diagnosis.summarize`; consumed by the rich report, the
    diagram and ``--json``.
    """

    n_events: int = 0
    n_ops: int = 0
    backward_roots: list = field(default_factory=list)  # labels of the tensors backward ran from
    n_backward: int = 0
    n_optimizer_steps: int = 0
    params: list = field(default_factory=list)  # ParamStatus
    harmful_cuts: list = field(default_factory=list)  # Event (one per source line)
    benign_cuts: list = field(default_factory=list)  # Event
    cut_verdicts: dict = field(default_factory=dict)  # event index -> "harmful" | "benign", for every cut
    problems: list = field(default_factory=list)  # Explanation, most important first
    failure: Explanation | None = None
    verdict: str = ""  # one line: "OK: every trainable parameter got a gradient" / "2 problems ..."
    ok: bool = True
    unseen: list = field(default_factory=list)
