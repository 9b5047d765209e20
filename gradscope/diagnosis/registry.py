"""The rule registry: every diagnosis rule, per gradient status, in an explicit order.

A rule is a small function ``fn(dx, q) -> Finding | None`` registered for one or more gradient
statuses with a priority (lower runs first). ``dx`` answers read-only questions about the trace
(the :class:`~.index.TraceIndex`), ``q`` is the question (:class:`Query`). The first rule of a status that
returns a finding (:class:`~.finding.Finding`: data, worded by :mod:`.wording`) decides it, and its name is
recorded on it (``Finding.rule``, then ``Explanation.rule``).

Two rules with the same name, or two rules of one status with the same priority (their order would be
ambiguous: one would shadow the other), are an error at import (:class:`RuleConflict`). The whole
table is :func:`Registry.table`; ``python -m gradscope.diagnosis`` prints it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Query", "Registry", "Rule", "RuleConflict", "REGISTRY", "rule", "STATUSES"]

#: the statuses rules are registered for, in the order the table shows them:
#: received (a gradient arrived; is it really fine?), nonfinite, zero, zero_node (per backward, newest first:
#: which node zeroed it), none (.grad is None), failure (backward raised)
STATUSES = ("received", "nonfinite", "zero", "zero_node", "none", "failure")


class RuleConflict(ValueError):
    """Two rules with one name, or with one (status, priority): raised when the second is registered."""


@dataclass(frozen=True)
class Rule:
    name: str
    statuses: tuple
    priority: int
    fn: object = field(compare=False)
    delegates: str | None = None  # the status whose rules this one runs (per backward, say): they decide


    @property
    def doc(self) -> str:
        return ((self.fn.__doc__ or "").strip().splitlines() or [""])[0]


@dataclass
class Query:
    """What a rule is asked about: the tensor (tid, its name, the facts read when asked) or the error message
    of a failed backward. ``memo`` holds facts computed once and shared by the rules of one question."""

    tid: int | None = None
    name: str = ""
    requires_grad: bool = False
    is_leaf: bool = True
    retains: bool = False
    status: str = ""  # the gradient status being explained ("none", "zero", ...)
    norm: float | None = None  # the gradient's norm, when it arrived
    msg: str = ""  # (failure rules) the error message
    backward: object = None  # (zero_node rules) the backward record being looked at
    memo: dict = field(default_factory=dict)

    def get(self, key, compute):
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]


class Registry:
    def __init__(self):
        self._by_name: dict = {}
        self._slots: dict = {}  # (status, priority) -> rule name
        self._order: dict = {}  # status -> its rules in running order (see ordered; emptied when a rule is added)

    def rule(self, statuses, priority: int, name: str | None = None, delegates: str | None = None):
        """Decorator: register ``fn`` for ``statuses`` (one or a tuple) at ``priority``. ``delegates``: the status
        whose rules ``fn`` runs (their names are recorded on the finding, not this one's)."""
        statuses = (statuses,) if isinstance(statuses, str) else tuple(statuses)

        def register(fn):
            n = name or fn.__name__
            if n in self._by_name:
                raise RuleConflict(f"two diagnosis rules are named {n!r}")
            for s in statuses:
                if s not in STATUSES:
                    raise RuleConflict(f"rule {n!r}: unknown status {s!r} (one of {', '.join(STATUSES)})")
                other = self._slots.get((s, priority))
                if other is not None:
                    raise RuleConflict(f"rules {other!r} and {n!r} both have status {s!r} and priority {priority}: "
                                       f"their order would be ambiguous")
            for s in statuses:
                self._slots[(s, priority)] = n
            self._by_name[n] = Rule(n, statuses, priority, fn, delegates)
            self._order.clear()
            return fn

        return register

    def __getitem__(self, name) -> Rule:
        return self._by_name[name]

    def __contains__(self, name) -> bool:
        return name in self._by_name

    def names(self) -> list:
        return list(self._by_name)

    def ordered(self, status) -> list:
        """The rules of ``status``, in the order they run."""
        return list(self._ordered(status))

    def _ordered(self, status) -> tuple:
        got = self._order.get(status)  # (sorted once per status: every query runs through them)
        if got is None:
            got = self._order[status] = tuple(sorted((r for r in self._by_name.values() if status in r.statuses),
                                                     key=lambda r: r.priority))
        return got

    def first(self, status, dx, q):
        """The finding of the first rule of ``status`` that has one (None when none does)."""
        for r in self._ordered(status):
            res = r.fn(dx, q)
            if res is not None:
                if not getattr(res, "rule", ""):
                    res.rule = r.name
                return res
        return None

    def run(self, name, dx, q):
        """One rule by name (its finding or None), recorded like :meth:`first`."""
        res = self._by_name[name].fn(dx, q)
        if res is not None and not getattr(res, "rule", ""):
            res.rule = name
        return res

    def table(self) -> list:
        """[(status, priority, name, first line of its doc)] for every status, in running order."""
        return [(s, r.priority, r.name, r.doc) for s in STATUSES for r in self.ordered(s)]

    def format(self) -> str:
        return "\n".join(f"{s:<10} {p:>4}  {n:<32} {d}" for s, p, n, d in self.table())


REGISTRY = Registry()
rule = REGISTRY.rule
