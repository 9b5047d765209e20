"""An explanation as a verification (:meth:`gradscope.Trace.verify`) left it: the cause and line of the undo that
restored the gradient, and a sentence saying what the re-run showed. Pure: data in, a new Explanation out (the
diagnosis' own explanation is never edited)."""
from __future__ import annotations

import dataclasses

from ..core.explanation import Explanation
from ..core.model import Site
from ..core.verification import FAILURE, Verification
from . import templates_verify as T

__all__ = ["apply"]


def apply(exp: Explanation | None, v: Verification | None, sites: dict, names=()) -> Explanation | None:
    """``exp`` with what ``v`` found about its target; ``sites``: event index -> the Site an undo of it shows
    (its statement, or its region's opener); ``names``: the parameters an explanation of several stands for (the
    first of them that was verified speaks for it)."""
    if exp is None or v is None:
        return exp
    key = FAILURE if exp.status == "error" else exp.target
    if key not in v.targets:
        key = next((k for k in names if k in v.targets), key)
    if not v.repeatable:
        if key in v.targets or not v.targets:
            return dataclasses.replace(exp, verified="not_repeatable", verification=T.not_repeatable_text(v.reason))
        return exp
    c = v.targets.get(key)
    if c is None:
        return exp
    if c.verdict == "not_repeatable":
        return dataclasses.replace(exp, verified="not_repeatable", verification=T.not_repeatable_text(
            c.untried[0][1] if c.untried else v.reason))
    if c.verdict == "not_a_cut":
        return dataclasses.replace(exp, verified="not_verified", verification=T.not_a_cut_text(c.cause))
    if c.verdict == "not_verified":
        return dataclasses.replace(exp, verified="not_verified", verification=T.untried_text(c.untried))
    if c.verdict == "no_single_undo":
        return dataclasses.replace(exp, verified="no_single_undo",
                                   verification=T.no_single_text(key, c.refuted, c.untried))
    u = c.undo
    site = sites.get(u.event) or Site(u.filename, u.lineno, "", "")
    code = site.code or u.op
    if c.also is not None:
        text = T.pair_text(key, u, c.also, c.result, len(c.refuted))
    else:
        text = T.verified_text(key, u, code, c.result, c.others)
    same = exp.site is not None and (exp.site.filename, exp.site.lineno) == (site.filename, site.lineno)
    if same or (c.also is not None and exp.site is not None
                and (exp.site.filename, exp.site.lineno) == (c.also.filename, c.also.lineno)):
        extra = list(exp.extra_sites)
        if c.also is not None:  # (the pair's other line is part of the explanation)
            for s in (site, sites.get(c.also.event) or Site(c.also.filename, c.also.lineno, "", "")):
                if (s.filename, s.lineno) != (exp.site.filename, exp.site.lineno) and all(
                        (s.filename, s.lineno) != (x.filename, x.lineno) for x in extra):
                    extra.append(s)
        return dataclasses.replace(exp, verified="verified", verification=text, extra_sites=extra)
    old = exp.site.short if exp.site is not None else ""
    refuted = exp.site is not None and any((r.filename, r.lineno) == (exp.site.filename, exp.site.lineno)
                                           for r in c.refuted)
    # (a line the re-run refuted is no extra site: the summary says it was tried and did not fix it)
    gone = {(site.filename, site.lineno)} | {(r.filename, r.lineno) for r in c.refuted}
    extra = [s for s in exp.extra_sites if (s.filename, s.lineno) not in gone]
    if exp.site is not None and not refuted:
        extra.insert(0, exp.site)
    return dataclasses.replace(
        exp, cause=c.cause, site=site, extra_sites=extra,
        summary=T.replaced_summary(key, exp.status or c.status, u, site.short, old, refuted),
        detail=T.replaced_detail(c.tried), fix=T.replaced_fix(u, None if key == FAILURE else exp.target or key),
        verified="verified", verification=text, rule="verified")
