"""Rules for a gradient that arrived (status `received`: is it really fine?) and for a non-finite one
(status `nonfinite`)."""
from __future__ import annotations

from ..explanation import Explanation
from . import templates as say
from .common import _NO_SAVE, _SAVES_RESULT, _opname, _receiver
from .registry import rule
from .wording import _at, _code, _code_of


def _ok_facts(dx, q):
    """(site of the loss, the norm as text, `from backward on ...`) for a gradient that arrived."""
    tid, norm = q.tid, q.norm
    bw = [b for b in dx.d.backwards if tid in b.leaf_grads and b.leaf_grads[tid].status == "received"]
    site = None
    root = None
    if bw:
        b = bw[-1]
        if b.roots:
            root = dx._root_label(dx.ev[b.event])
            p = dx.d.producer(b.roots[0])
            site = p.site if p else dx.ev[b.event].site
    n = f" (norm {norm:.3g})" if isinstance(norm, (int, float)) and norm is not None else ""
    via = f" from backward on `{root}`" if root else ""
    return site, n, via


def _unheld(dx, q):
    """A leaf no optimizer holds, in a trace whose optimizers stepped."""
    tid = q.tid
    info = dx.d.tensors.get(tid)
    return (dx.trainable and tid not in dx.trainable and info is not None and info.is_leaf and any(
            e.kind == "optimizer_step" for e in dx.ev))


@rule('received', 0)
def cleared_after_use(dx, q):
    """Backward filled it, its consumers read it, then it was cleared: as it should be."""
    used = q.memo.get("cleared")
    if used is None:
        return None
    return dx._ok_cleared(q.tid, q.name, used, q.memo['cleared_status'])


@rule(('received', 'zero', 'nonfinite'), 10)
def corrupting_write(dx, q):
    """A write through .data / a detached alias into a tensor autograd saved."""
    return dx._corrupted(q.tid, q.name, q.status)


@rule('received', 20)
def unfrozen_after_optimizer_built(dx, q):
    """It gets a gradient, but it was unfrozen only after the optimizer's parameters were chosen."""
    tid, name = q.tid, q.name
    if not _unheld(dx, q):
        return None
    site, n, via = _ok_facts(dx, q)
    # it learns nothing: no optimizer holds it (a module in a plain list/dict is not registered)
    unfrozen = [e for e in dx.ev if e.kind == "requires_grad" and tid in e.input_ids()
                and e.detail.get("value") is True]
    if unfrozen and any(e.kind == "requires_grad" and tid in e.input_ids() and e.detail.get("value") is False
                        and e.index < unfrozen[-1].index for e in dx.ev):
        u = unfrozen[-1]
        return Explanation("ok", site, name, *say.unfrozen_after_optimizer_built_text(name, n, via, u))
    return None


@rule('received', 30)
def not_in_any_optimizer(dx, q):
    """It gets a gradient, but no optimizer holds it (not registered)."""
    name = q.name
    if not _unheld(dx, q):
        return None
    site, n, via = _ok_facts(dx, q)
    return Explanation("ok", site, name, *say.not_in_any_optimizer_text(name, n, via))


@rule('received', 40)
def gradient_flows(dx, q):
    """The gradient arrived and is non-zero."""
    name = q.name
    site, n, via = _ok_facts(dx, q)
    return Explanation("ok", site, name, *say.gradient_flows_text(name, n, via))


@rule('nonfinite', 20)
def first_nonfinite_node(dx, q):
    """The backward node that produced the first inf/nan."""
    name = q.name
    for b in reversed(dx.d.backwards):
        if b.first_nonfinite is not None:
            node = b.nodes.get(b.first_nonfinite)
            e = dx.ev[node.event] if node and node.event is not None else None
            site = e.site if e else None
            op = _opname(e) if e else (node.name if node else "?")
            return Explanation(
                "nonfinite_gradient", site, name, *say.first_nonfinite_node_text(name, op, node, site),
                evidence=[e] if e else [])
    return None


@rule('nonfinite', 30)
def nonfinite_unknown(dx, q):
    """The trace did not see which node produced the inf/nan."""
    name = q.name
    return Explanation("nonfinite_gradient", None, name, *say.nonfinite_unknown_text(name))


class ReceivedMixin:
    """Helpers of the received/nonfinite rules (mixed into Diagnosis)."""

    def _ok_cleared(self, tid, name, used, status):
        fill, clear, readers = used
        b = next((x for x in self.d.backwards if x.event == fill.index), None)
        gi = b.leaf_grads.get(tid) if b is not None else None
        n = f" (norm {gi.norm:.3g})" if gi is not None and isinstance(gi.norm, (int, float)) else ""
        root = self._root_label(fill)
        seen = []
        for r in readers:
            what = (f"{_receiver(_code_of(r), '.step(') or r.op.split('.')[0]}.step(){_at(r.site)}"
                    if r.kind == "optimizer_step" else f"clipping{_at(r.site)}")
            if what not in seen:
                seen.append(what)
        by = f", {' and '.join(seen[:2])} read it" if seen else ""
        how = "set it back to None" if clear.kind == "grad_set" else "zeroed it"
        now = "None" if status == "none" else "all zeros"
        return Explanation(
            "ok", fill.site, name, *say.ok_cleared_text(name, now, root, n, by, how, clear, fill),
            evidence=[fill, clear])

    def _not_trained(self, tid, name, inner, status):
        """A parameter the step does not train (no optimizer holds it; only used under no_grad or not used):
        a target network, an EMA teacher, a model being evaluated. Not a problem: say so, with the reason."""
        uses = [e for e in self._events_on(tid) if e.kind in ("op", "cut", "module") and e.context == "user"]
        grad_uses = [e for e in uses if e.grad_enabled]
        held = "no optimizer in the trace holds it" if self.trainable else "the trace saw no optimizer step"
        if uses and not grad_uses:
            u = inner.site or uses[0].site  # (the user's call line, when the explanation has it)
            how = f"it was only used with gradients disabled (first{_at(u)}{_code(u)})"
        elif not uses:
            how = "the step never used it"
        else:
            how = inner.summary.split(": ", 1)[-1].rstrip(".")
        now = "None" if status == "none" else ("all zeros" if status == "zero" else "not finite")
        return Explanation(
            "not_trained", inner.site, name, *say.not_trained_text(self, name, now, held, how, inner),
            path=inner.path, evidence=inner.evidence)

    def _corrupting_writes(self) -> list:
        """In-place writes through a ``.data`` alias into a tensor that autograd saved for a backward that ran
        afterwards: [(write, the .data event, the op that saved the tensor)]. PyTorch's version check does not see
        them, so backward silently uses the overwritten values."""
        hit = self.__dict__.get("_corrupt")
        if hit is not None:
            return hit
        out = []
        alias = {}
        for e in self.ev:
            # (.data only: a .detach() alias shares the version counter, so autograd raises instead)
            if e.kind == "cut" and e.cut == "data" and e.inputs and e.outputs:
                alias[e.outputs[0].tid] = (e, e.inputs[0].tid)
        ran = {}  # forward event index -> first backward that ran its node
        if alias:
            for b in self.d.backwards:
                for n in b.nodes.values():
                    if n.ran and n.event is not None:
                        ran.setdefault(n.event, b.event)
        for w in self.ev if alias else ():
            if w.kind != "inplace":
                continue
            a = alias.get(w.detail.get("target")) or alias.get(w.detail.get("base"))
            if a is None:
                continue
            cut, orig = a
            savers = [self.ev[i] for i in self.consumers.get(orig, ()) if i < w.index and self.ev[i].kind == "op"
                      and _opname(self.ev[i]) not in _NO_SAVE]
            p = self.d.producer(orig)
            if p is not None and p.index < w.index and _opname(p) in _SAVES_RESULT:
                savers.insert(0, p)
            saver = next((x for x in savers if ran.get(x.index, -1) > w.index), None)
            if saver is not None:
                out.append((w, cut, saver))
        self._corrupt = out
        return out

    def _corrupted(self, tid, name, status):
        """``tid``'s gradient was computed from values overwritten through .data / a detached alias."""
        writes = self._corrupting_writes()
        if not writes:
            return None
        cone = {x.index for x in self.cone(tid)}
        for w, cut, saver in writes:
            if saver.index not in cone and saver.index != self.d.tensors[tid].producer:
                continue
            orig = self.label(cut.inputs[0].tid)
            how = ".data"
            got = {"zero": "all zeros", "nonfinite": "inf/nan", "received": "computed from overwritten values"}.get(
                status, "wrong")
            return Explanation(
                "inplace_saved_tensor", w.site, name, *say.corrupted_text(name, got, orig, how, w, saver),
                evidence=[w, cut, saver])
        return None
