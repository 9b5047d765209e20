"""The experiments a verification runs: for each starved or failing target, the recorded cuts on its way whose
undoing could restore it (:class:`~gradscope.core.verification.Undo`), the diagnosis' own choice first, and those
no undo exists for (with the reason). Pure: reads the trace index, never torch."""
from __future__ import annotations

from ..core.model import Cause, Event
from ..core.verification import NO_UNDO, Undo, frame_key

__all__ = ["candidates", "undo_of", "cause_of_undo", "CUT_CAUSES", "LATENT"]

#: a detach that cut nothing when it ran (its input had no history, since an earlier cut): undone only together
#: with another undo (two cuts in a row starve a tensor only together)
LATENT = "latent: cuts nothing unless an earlier cut is undone too"

#: why a re-wrap the recorder inferred (from shared memory) is not undone
UNSEEN_REWRAP = "cannot undo: torch.Tensor(t) / Variable(t) is not seen by torch function modes"

#: why an optimizer's in-place step over a saved parameter is not undone
OPTIMIZER_INPLACE = "no undo: optimizer.step() writes its parameters in place; call it after every backward that needs them"

_DETACH_OPS = {"torch.Tensor.detach", "torch.detach", "torch.Tensor.data"}
_ROUND_TRIP = {"numpy": "numpy", "item": "item", "tolist": "tolist"}
_CAUSE_OF_KIND = {
    "detach": Cause.DETACH, "data": Cause.DATA_ATTR, "numpy": Cause.NUMPY_ROUNDTRIP, "item": Cause.ITEM_ROUNDTRIP,
    "tolist": Cause.TOLIST_ROUNDTRIP, "rewrap": Cause.TENSOR_REWRAP, "requires_grad": Cause.REQUIRES_GRAD_FALSE,
    "grad_set": Cause.SET_TO_NONE_TIMING, "inplace": Cause.INPLACE_SAVED_TENSOR, "data_set": Cause.DATA_ATTR,
}


#: the causes an undo can test (a cut a re-run can take back); the others (an unused parameter, a hook, a custom
#: Function, a non-finite value) are not verified by undoing cuts
CUT_CAUSES = frozenset(str(c) for c in _CAUSE_OF_KIND.values()) | {
    str(Cause.NO_GRAD_BLOCK), str(Cause.INFERENCE_MODE), str(Cause.FROZEN_PARAM), str(Cause.DETACH),
    str(Cause.NONDIFFERENTIABLE_OP), str(Cause.INTEGER_CAST), str(Cause.REENTRANT_CHECKPOINT)}


def cause_of_undo(u: Undo, is_param: bool = False) -> str:
    """The cause an explanation names when undoing ``u`` restored the gradient."""
    if u.kind == "region":
        return str(Cause.INFERENCE_MODE if u.inference else Cause.NO_GRAD_BLOCK)
    if u.kind == "requires_grad" and is_param:
        return str(Cause.FROZEN_PARAM)
    return str(_CAUSE_OF_KIND.get(u.kind, Cause.UNKNOWN))


def undo_of(index, e: Event, step):
    """(Undo, None) for recorded event ``e``, (Undo, reason) when it cannot be undone, or None when it is no
    cut a re-run could undo. ``step``: the step function's (file, qualified name)."""
    s = e.site
    if s is None:
        return None
    if e.context != "user":
        # a clear inside zero_grad(), a freeze inside a framework's helper, an optimizer's in-place step: the
        # user's line that called it is the site
        if e.kind == "inplace" and e.context == "optimizer" and e.detail.saved:
            return _undo("inplace", e, s, step), OPTIMIZER_INPLACE
        if not (e.kind in ("grad_set", "requires_grad") and e.context in ("optimizer", "library")):
            return None
    kind = None
    if e.kind == "cut":
        c = str(e.cut)
        if c in NO_UNDO:
            return _undo(c, e, s, step), NO_UNDO[c]
        if c in ("detach", "data", "data_set"):
            kind = c
        elif c in _ROUND_TRIP:
            kind = c
        elif c == "rewrap":
            if e.detail.inferred:
                return _undo("rewrap", e, s, step), UNSEEN_REWRAP
            kind = "rewrap"
        elif c in ("no_grad", "inference_mode"):
            r = index.region_site(e) or s
            return Undo("region", e.op, r.filename, r.lineno, ((r.filename, r.lineno),), e.index,
                        inference=c == "inference_mode"), None
    elif e.kind == "requires_grad" and e.detail.value is False:
        kind = "requires_grad"
    elif e.kind == "grad_set" and e.detail.value is None:
        kind = "grad_set"
    elif e.kind == "inplace" and e.detail.saved:
        kind = "inplace"
    if kind is None:
        return None
    return _undo(kind, e, s, step), None


def _undo(kind, e, s, step) -> Undo:
    return Undo(kind, e.op, s.filename, s.lineno, frame_key(s.stack or (s.frame(),), step), e.index)


def candidates(index, targets, step, evidence=()) -> list:
    """[(Undo, reason or None)], deduplicated by what they undo where: the events in ``evidence`` (the
    diagnosis' explanations, in order) first, then for each target tid (None: the failure) the cuts downstream
    of it, its freezes and clears, and the in-place writes into saved tensors (for the failure)."""
    out, seen = [], set()

    def add(e, own=False):
        if not own and e.kind == "cut" and index.feeds_loss_target(e):
            return  # (a loss's detached target is the idiom: undoing it changes the objective, not the flow)
        got = undo_of(index, e, step)
        if got is None:
            return
        u = got[0]
        k = (u.kind, u.key, u.lineno if u.kind == "region" else None)
        if k in seen:
            return
        seen.add(k)
        out.append(got)

    for e in evidence:
        if isinstance(e, Event):
            add(e, own=True)
    for tid in targets:
        if tid is None:
            for e in index.ev:
                if e.kind == "inplace" and e.detail.saved:
                    add(e)
            continue
        latent = []
        for e in index.cone(tid, through_copies=False):
            if e.kind == "cut" and any(r.requires_grad for r in e.inputs):
                add(e)
            elif e.kind == "op" and e.op in _DETACH_OPS and e.context == "user" and e.site is not None:
                latent.append(e)
        for e in latent:
            u = _undo("data" if e.op.endswith("data") else "detach", e, e.site, step)
            k = (u.kind, u.key, None)
            if k not in seen:
                seen.add(k)
                out.append((u, LATENT))
        for e in index.ev:
            if e.kind in ("requires_grad", "grad_set") and tid in e.input_ids():
                add(e)
    # a detach on a round trip's own line (`x.detach().numpy()`): the round trip's undo covers it (undone alone,
    # the numpy() call would raise)
    trips = {u.key for u, _ in out if u.kind in _ROUND_TRIP}
    return [(u, r) for u, r in out if not (u.kind in ("detach", "data") and u.key in trips)]
