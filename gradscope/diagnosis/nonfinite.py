"""Where a non-finite value entered the forward, read from the values the recorder could still see after a
backward and from the trace's ops (:meth:`.facts.Facts.nonfinite_entry`): functions of the Facts (``self``)."""
from __future__ import annotations

import math
from collections import deque

from .common import _PASS_ON, _SQUASHING, _at_domain_edge, _opname


def entry(self, rec, target=None):
    """The first recorded call whose result holds inf/nan although none of its inputs is known to: where the
    non-finite value entered the forward, read from the values the recorder could still see after that
    backward (``rec.values``) and the fills it was given (``torch.full(..., nan)``). Only a call whose bad value
    reaches ``target`` (the forward event of the node that first sent a non-finite gradient; else the
    backward's roots) through tensors not known to be finite counts (a -inf mask a softmax turns into zeros
    does not). None when the values do not say."""
    vals = rec.values if rec is not None else None
    if not vals and not any(e.detail.nonfinite_fill for e in self.ev[:rec.event if rec else 0]) and (
            target is None or _opname(target) not in _PASS_ON):
        return None
    vals = vals or {}

    def bad(tid):
        return vals.get(tid) in ("nan", "inf")

    if target is not None:
        goal_tids, goal = set(target.output_ids()) | set(target.input_ids()), target.index + 1
    else:
        bev = self.ev[rec.event] if 0 <= rec.event < len(self.ev) else None
        goal_tids = set(rec.roots or (bev.detail.roots if bev is not None else ()) or ())
        goal = rec.event
    anc = self.ancestors(list(goal_tids), before=goal)
    if target is not None:
        anc = anc | {target.index}
    for i in sorted(anc):
        e = self.ev[i]
        if e.kind not in ("op", "cut", "inplace", "external") or e.context not in ("user", "library"):
            continue
        outs = e.output_ids() or ([e.detail.target] if e.detail.target is not None else [])
        if not (e.detail.nonfinite_fill or any(bad(t) for t in outs)):
            continue
        if any(bad(r.tid) for r in e.inputs if r.tid not in outs):
            continue  # (it only passed on what came in)
        if _carries_nonfinite(self, outs, goal_tids, anc, vals):
            return _suspect_upstream(self, e, vals, anc) or e
    if target is not None and (_nan_came_in(rec) or _opname(target) in _PASS_ON):
        # (or the node's op cannot make an inf/nan from finite values, a linear layer: it came in with a saved
        # input whose value is gone)
        # no value read says, but the node's backward made nan (not inf) from a finite gradient: its input
        # value was nan already (log(nan); log(0) would have made inf): an inf/nan fill upstream of it, through
        # unread values (a row masked entirely with -inf, which a softmax turns into nan)
        hit = _suspect_upstream(self, target, vals, anc, fills_only=True) or (
            None if _at_domain_edge(target) else _suspect_upstream(self, target, vals, anc))
        # (a fill first; else, unless the node's own op can make it from finite values (a fractional power at
        # 0, whose derivative is infinite), the nearest op at the edge of its domain upstream: rsqrt(0))
        if hit is not None:
            return hit
    return None

def _nan_came_in(rec) -> bool:
    """The first node that sent a non-finite gradient sent nan only (norms of nan), no inf."""
    n = rec.nodes.get(rec.first_nonfinite) if rec is not None and rec.first_nonfinite is not None else None
    norms = [v for v in (n.out_norms if n is not None else ()) if v is not None and not math.isfinite(v)]
    return bool(norms) and all(math.isnan(v) for v in norms)

def _suspect_upstream(self, e, vals, anc, fills_only=False):
    """When the call that holds the first inf/nan read had inputs whose values were gone (not read), the value
    may have entered before it: the nearest call upstream, through those unread tensors, that filled in an
    inf/nan (a -inf mask over a whole row, which a softmax turns into nan) or op at the edge of its domain (a
    division, log, sqrt, acos, exp; not with ``fills_only``). None when its inputs were all read, or nothing
    fits."""
    todo = deque(r.tid for r in e.inputs if vals.get(r.tid) is None)
    if not todo:
        return None
    seen, order = set(), []
    while todo and len(seen) < 256:
        t = todo.popleft()
        if t in seen:
            continue
        seen.add(t)
        makers = [self.d.producer(t)] + [self.ev[i] for i in self.consumers.get(t, ())
                                           if self.ev[i].kind == "inplace" and self.ev[i].detail.target == t]
        for p in makers:
            if p is None or p.index not in anc or p in order:
                continue
            order.append(p)
            todo.extend(r.tid for r in p.inputs if vals.get(r.tid) != "finite")
    return next((p for p in order if p.detail.nonfinite_fill or (
        not fills_only and _at_domain_edge(p) and p.context == "user")), None)  # (the nearest)

def _carries_nonfinite(self, start, goal_tids, anc, vals) -> bool:
    """Does a value reach ``goal_tids`` from the tensors ``start`` through events of ``anc`` without passing
    only tensors known to be finite?"""
    seen, frontier = set(start), list(start)
    while frontier:
        t = frontier.pop()
        if t in goal_tids:
            return True
        for i in self.consumers.get(t, ()):
            if i not in anc:
                continue
            # (a softmax/exp of an unread value is taken as finite: it turns a -inf mask into zeros)
            squash = _opname(self.ev[i]) in _SQUASHING
            for o in self.ev[i].output_ids():
                st = vals.get(o)
                if o not in seen and st != "finite" and not (squash and st is None):
                    seen.add(o)
                    frontier.append(o)
    return False
