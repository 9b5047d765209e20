"""A rule's answer as data: :class:`Finding`. No prose: the wording (:mod:`.wording`, filled by the
``templates*`` modules) turns a Finding into its summary, detail and fix, and :func:`.wording.explain` into the
public :class:`~gradscope.Explanation` at the end."""
from __future__ import annotations

from dataclasses import dataclass, field

from .wording import facts_for


@dataclass
class Finding:
    """What a rule found: the cause, the site, the target, the evidence (events), the path, and ``facts``: what its
    wording needs (names, events, sites, counts), keyed by the parameters of the wording function ``wording``
    names (a key of :data:`.wording.WORDING`: the rule's name, or ``rule.form`` for one of its forms).

    The passes over findings (:mod:`.core`) add data, never text: ``other_cuts`` (further cuts on other paths,
    as (event, site)), ``tied`` (other names of the same Parameter), ``group`` (the targets one finding stands
    for in the step summary), ``inner`` (the finding a not-trained finding wraps)."""

    cause: str
    site: object = None  # Site | None
    target: str = ""
    wording: str = ""
    facts: dict = field(default_factory=dict)
    path: list = field(default_factory=list)  # PathStep
    evidence: list = field(default_factory=list)  # Event
    extra_sites: list = field(default_factory=list)  # Site
    status: str = ""
    rule: str = ""
    other_cuts: list = field(default_factory=list)  # [(Event, Site)]
    tied: tuple = ()
    group: list = field(default_factory=list)  # names


def found(cause, site, target, key, /, *args, path=(), evidence=(), extra_sites=(), **kw) -> Finding:
    """A Finding worded by ``key``: ``args``/``kw`` are its wording function's arguments (the facts it needs)."""
    return Finding(cause, site, target, key, facts_for(key, *args, **kw), list(path), list(evidence),
                   list(extra_sites))
