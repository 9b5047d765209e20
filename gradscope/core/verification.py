"""What a verification found, as plain data (no torch): :meth:`gradscope.Trace.verify` re-ran the step once per
candidate cut with that cut undone and recorded, per trial, what each starved or failing target got.

>>> u = Undo("detach", "torch.Tensor.detach", "t.py", 12, (("t.py", 12),), 6)
>>> t = Trial(u, results={"fc.weight": TargetResult("received", 0.31)})
>>> t.restored("fc.weight")
True
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .model import Site

__all__ = ["frame_key", "error_line", "FAILURE", "Undo", "TargetResult", "Trial", "TargetCheck", "Verification", "UNDO_KINDS", "NO_UNDO", "NOT_JOINED", "NOT_REACHED"]

#: the target name a failing backward (the step's exception) is checked under
FAILURE = "<failure>"

#: what each kind of undo does (documented in the README's verification section)
UNDO_KINDS = {
    "detach": "detach() returns a view that keeps the input's graph",
    "data": ".data returns a view that keeps the input's graph",
    "numpy": "the NumPy round trip's result is joined straight-through to the tensor it came from",
    "item": "the .item() value's way back into torch is joined straight-through to the tensor it came from",
    "tolist": "the .tolist() values' way back into torch are joined straight-through to the tensor they came from",
    "rewrap": "torch.tensor(t) is joined straight-through to t",
    "region": "the no_grad / inference_mode / set_grad_enabled(False) region runs with grad enabled",
    "requires_grad": "the requires_grad_(False) / requires_grad = False is skipped",
    "grad_set": "the zero_grad() / .grad = None is skipped",
    "inplace": "the in-place write goes to a copy (code that reads the tensor afterwards sees the value before it)",
    "data_set": "the .data = ... assignment is skipped",
}

#: cut kinds no undo exists for (the result: "cannot undo", with this reason)
NO_UNDO = {
    "nondiff": "no undo: the op has no gradient; it needs a relaxation (softmax for argmax, a sigmoid for a threshold)",
    "int_cast": "no undo: an integer or bool value carries no gradient; it needs a relaxation",
    "zero_grad_op": "no undo: the op's gradient is zero almost everywhere; it needs a relaxation or a straight-through estimator",
    "checkpoint": "no undo: a reentrant checkpoint (use_reentrant=False is the fix to try)",
}


#: why a re-run could not undo a NumPy / .item() / .tolist() round trip (its values never came back by a joinable call)
NOT_JOINED = ("cannot undo: the values did not come back into torch by a call gradscope can join (torch.tensor / "
              "as_tensor / from_numpy of the same values)")
#: why a re-run tried nothing for an undo
NOT_REACHED = "the re-run never reached this call"

@dataclass(frozen=True, slots=True)
class Undo:
    """One intervention: undo the recorded call of kind ``kind`` (op ``op``) at ``filename:lineno`` reached through
    ``key`` (the (file, line) frames from the step's own frame inward), every time it runs in the re-run.
    ``event``: the recorded event it undoes (index in the trace verified)."""

    kind: str
    op: str
    filename: str
    lineno: int
    key: tuple
    event: int
    inference: bool = False  # a region: an inference_mode one

    def to_json(self) -> dict:
        return {"kind": self.kind, "op": self.op, "filename": self.filename, "lineno": self.lineno,
                "key": [list(k) for k in self.key], "event": self.event, "inference": self.inference}

    @classmethod
    def from_json(cls, d: dict) -> "Undo":
        return cls(str(d["kind"]), str(d["op"]), str(d["filename"]), int(d["lineno"]),
                   tuple((str(a), int(b)) for a, b in d.get("key", ())), int(d.get("event", -1)),
                   bool(d.get("inference", False)))


@dataclass(slots=True)
class TargetResult:
    """What one target got in one re-run: its gradient status and norm, or (the failure) the error, None when
    backward succeeded."""

    # "received" | "none" | "zero" | "nonfinite" | "missing" (not in the re-run) | "stale" (a .grad left from an
    # earlier step: no gradient reached it in the step that showed the problem) | "ok" | "error"
    status: str
    norm: float | None = None
    error: str | None = None

    @property
    def good(self) -> bool:
        return self.status in ("received", "ok")


@dataclass(slots=True)
class Trial:
    """One re-run: ``undo`` (and ``also``, for a pair) undone; ``tried`` False with ``reason`` when it could not be
    undone; ``results``: target name -> TargetResult; ``hits``: how many times the re-run reached the undone call."""

    undo: Undo
    also: Undo | None = None
    tried: bool = True
    reason: str = ""
    results: dict = field(default_factory=dict)
    hits: int = 0
    seconds: float = 0.0
    error: str | None = None  # the re-run raised (a target that is not the failure)

    def restored(self, target: str) -> bool:
        r = self.results.get(target)
        return bool(self.tried and r is not None and r.good)


@dataclass(slots=True)
class TargetCheck:
    """The verdict on one target. ``verdict``: "verified" (undoing ``undo`` alone restored it; ``also`` set: only
    the pair did), "no_single_undo" (no undo tried restored it), "not_verified" (nothing could be tried)."""

    target: str
    status: str  # what the recorded step gave it
    verdict: str
    undo: Undo | None = None
    also: Undo | None = None
    result: TargetResult | None = None
    site: Site | None = None  # the verified undo's site as the explanation shows it
    cause: str = ""  # the verified undo's cause
    refuted: list = field(default_factory=list)  # Undo tried whose undoing did not restore it
    untried: list = field(default_factory=list)  # (Undo, reason)
    tried: int = 0  # single undos tried
    others: list = field(default_factory=list)  # Undo whose undoing alone restored it as well


@dataclass(slots=True)
class Verification:
    """The whole verification: whether the step repeats, the trials, a check per target."""

    repeatable: bool = True
    reason: str = ""  # why it could not verify (not repeatable: what differed)
    trials: list = field(default_factory=list)
    targets: dict = field(default_factory=dict)  # name -> TargetCheck
    seconds: float = 0.0
    step_seconds: float = 0.0  # the unmodified re-run's time
    budget_s: float | None = None
    skipped: int = 0  # candidates not tried (the budget or the cap was reached)
    baseline: dict = field(default_factory=dict)  # target -> TargetResult of the unmodified re-run
    base_signature: tuple = ()  # the unmodified re-run's flow (see gradscope._verify)
    pair_candidates: list = field(default_factory=list)  # Undo that could be tried (for pairs)

    def to_json(self) -> dict:
        return {
            "repeatable": self.repeatable, "reason": self.reason, "seconds": round(self.seconds, 4),
            "step_seconds": round(self.step_seconds, 4), "skipped": self.skipped,
            "trials": [{"undo": t.undo.to_json(), "also": t.also.to_json() if t.also else None, "tried": t.tried,
                        "reason": t.reason, "hits": t.hits, "seconds": round(t.seconds, 4), "error": t.error,
                        "results": {k: {"status": r.status, "norm": r.norm, "error": r.error}
                                    for k, r in t.results.items()}} for t in self.trials],
            "targets": {k: {"verdict": c.verdict, "status": c.status, "cause": c.cause,
                            "undo": c.undo.to_json() if c.undo else None,
                            "also": c.also.to_json() if c.also else None,
                            "norm": c.result.norm if c.result else None,
                            "result": _result_json(c.result) if c.result else None,
                            "refuted": [u.to_json() for u in c.refuted],
                            "untried": [[u.to_json() if u is not None else None, why] for u, why in c.untried],
                            "others": [u.to_json() for u in c.others], "tried": c.tried}
                        for k, c in self.targets.items()},
        }

    @classmethod
    def from_json(cls, d: dict) -> "Verification":
        """A verification as :meth:`to_json` wrote it (a saved trace's: what ``gradscope show`` says of it)."""
        def undo(x):
            return Undo.from_json(x) if x else None

        def result(x):
            return TargetResult(str(x["status"]), x.get("norm"), x.get("error")) if x else None

        v = cls(repeatable=bool(d.get("repeatable", True)), reason=str(d.get("reason") or ""),
                seconds=float(d.get("seconds") or 0.0), step_seconds=float(d.get("step_seconds") or 0.0),
                skipped=int(d.get("skipped") or 0))
        for t in d.get("trials") or ():
            v.trials.append(Trial(Undo.from_json(t["undo"]), undo(t.get("also")), bool(t.get("tried", True)),
                                  str(t.get("reason") or ""),
                                  {k: result(r) for k, r in (t.get("results") or {}).items()},
                                  int(t.get("hits") or 0), float(t.get("seconds") or 0.0), t.get("error")))
        for k, c in (d.get("targets") or {}).items():
            r = result(c.get("result")) or (TargetResult("received", c["norm"]) if c.get("norm") is not None else None)
            v.targets[k] = TargetCheck(
                k, str(c.get("status") or ""), str(c["verdict"]), undo(c.get("undo")), undo(c.get("also")), r,
                None, str(c.get("cause") or ""), [Undo.from_json(u) for u in c.get("refuted") or ()],
                [(undo(u), str(why)) for u, why in c.get("untried") or ()], int(c.get("tried") or 0),
                [Undo.from_json(u) for u in c.get("others") or ()])
        return v


def _result_json(r) -> dict:
    return {"status": r.status, "norm": r.norm, "error": r.error}


def frame_key(stack, step) -> tuple:
    """The (file, line) frames of a site's ``stack`` (outermost first) from the step function's own frame inward
    (``step``: its (file, qualified name)); the innermost frame alone when the step's frame is not among them."""
    if not stack:
        return ()
    if step is not None:
        for i, f in enumerate(stack):
            if f.filename == step[0] and f.function == step[1]:
                return tuple((g.filename, g.lineno) for g in stack[i:])
    f = stack[-1]
    return ((f.filename, f.lineno),)


def error_line(err) -> str:
    """An exception as one short line: ``RuntimeError: element 0 of tensors ...``."""
    return f"{type(err).__name__}: {err}".split("\n")[0][:300]
