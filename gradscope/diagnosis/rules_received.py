"""Rules for a gradient that arrived (status `received`: is it really fine?) and for a non-finite one
(status `nonfinite`)."""
from __future__ import annotations

from ..core.model import Cause, Frame
from . import templates as say  # noqa: F401  (registers the wording the findings here name)
from .common import _opname
from .finding import found
from .registry import rule


def _ok_facts(dx, q):
    """(site of the loss, the gradient's norm, the label of the loss backward ran from) for a gradient that
    arrived."""
    tid, norm = q.tid, q.norm
    bw = [b for b in dx.d.backwards if tid in b.leaf_grads and b.leaf_grads[tid].status == "received"]
    site = None
    root = None
    if bw:
        b = bw[-1]
        if b.roots:
            root = dx.root_label(dx.ev[b.event])
            p = dx.d.producer(b.roots[0])
            site = p.site if p else dx.ev[b.event].site
    return site, norm, root


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
    return _ok_cleared(dx, q.tid, q.name, used, q.memo['cleared_status'])


@rule(('received', 'zero', 'nonfinite'), 10)
def corrupting_write(dx, q):
    """A write through .data / a detached alias into a tensor autograd saved."""
    return _corrupted(dx, q.tid, q.name, q.status)


@rule('received', 20)
def unfrozen_after_optimizer_built(dx, q):
    """It gets a gradient, but it was unfrozen only after the optimizer's parameters were chosen."""
    tid, name = q.tid, q.name
    if not _unheld(dx, q):
        return None
    site, norm, root = _ok_facts(dx, q)
    # it learns nothing: no optimizer holds it (a module in a plain list/dict is not registered)
    unfrozen = [e for e in dx.ev if e.kind == "requires_grad" and tid in e.input_ids()
                and e.detail.value is True]
    if unfrozen and any(e.kind == "requires_grad" and tid in e.input_ids() and e.detail.value is False
                        and e.index < unfrozen[-1].index for e in dx.ev):
        u = unfrozen[-1]
        return found(Cause.OK, site, name, "unfrozen_after_optimizer_built", name, norm, root, u)
    return None


@rule('received', 30)
def not_in_any_optimizer(dx, q):
    """It gets a gradient, but no optimizer holds it (not registered)."""
    name = q.name
    if not _unheld(dx, q):
        return None
    site, norm, root = _ok_facts(dx, q)
    return found(Cause.OK, site, name, "not_in_any_optimizer", name, norm, root)


@rule('received', 34)
def create_graph_backward(dx, q):
    """It gets its gradient from backward(create_graph=True): right, but the gradient keeps a graph that refers
    back to the parameter (torch warns of the reference cycle: memory grows each step)."""
    for b in dx.backward_events():
        if b.op == "torch.autograd.grad" or not b.detail.create_graph:
            continue
        anc = dx.ancestors(b.detail.roots or b.input_ids(), before=b.index)
        if any(q.tid in dx.ev[i].input_ids() for i in anc):
            _, norm, root = _ok_facts(dx, q)
            return found(Cause.OK, b.site, q.name, "gradient_flows.create_graph", q.name, norm, root, b, evidence=[b])
    return None


@rule('received', 36)
def legacy_module_hook(dx, q):
    """It gets its gradient, and a module around it has a register_backward_hook hook (not the full kind): that
    hook sees the gradient of the module's last op only (torch warns), not of the module's inputs and outputs."""
    legacy = dx.d.meta.get("legacy_backward_hooks") or {}
    for path, hooked in legacy.items():
        if hooked.get("hook") and q.tid in (hooked.get("params") or ()):
            _, norm, root = _ok_facts(dx, q)
            site = dx.frame_site(Frame.from_json(hooked["hook"][0]))
            return found(Cause.OK, site, q.name, "gradient_flows.legacy_hook", q.name, norm, root, path or None,
                         site)
    return None


@rule('received', 40)
def gradient_flows(dx, q):
    """The gradient arrived and is non-zero."""
    name = q.name
    site, norm, root = _ok_facts(dx, q)
    return found(Cause.OK, site, name, "gradient_flows", name, norm, root)


@rule('nonfinite', 20)
def first_nonfinite_node(dx, q):
    """The backward node that produced the first inf/nan."""
    name = q.name
    for b in reversed(dx.d.backwards):
        if b.first_nonfinite is not None:
            node, e = dx.nonfinite_source(b)
            entry = dx.nonfinite_entry(b, e or dx.enclosing_event(b, node))
            if entry is not None and (e is None or entry.index != e.index):  # where the inf/nan appeared
                value = next((b.values[t] for t in entry.output_ids() if b.values.get(t) in ("nan", "inf")), "nan")
                return found(Cause.NONFINITE_GRADIENT, entry.site, name, "first_nonfinite_node.entered", name, entry,
                             _opname(entry), bool(entry.detail.nonfinite_fill), value, node,
                             evidence=[entry] + ([e] if e is not None else []))
            site = e.site if e else None
            op = _opname(e) if e else (node.name if node else "?")
            return found(
                Cause.NONFINITE_GRADIENT, site, name, "first_nonfinite_node", name, op, node, site,
                evidence=[e] if e else [])
    return None


@rule('nonfinite', 30)
def nonfinite_unknown(dx, q):
    """The trace did not see which node produced the inf/nan."""
    name = q.name
    return found(Cause.NONFINITE_GRADIENT, None, name, "nonfinite_unknown", name)


def _ok_cleared(ix, tid, name, used, status):
    fill, clear, readers = used
    b = next((x for x in ix.d.backwards if x.event == fill.index), None)
    gi = b.leaf_grads.get(tid) if b is not None else None
    norm = gi.norm if gi is not None else None
    root = ix.root_label(fill)
    return found(Cause.OK, fill.site, name, "cleared_after_use", name, status, root, norm, readers, clear, fill,
                 evidence=[fill, clear])


def _corrupted(ix, tid, name, status):
    """``tid``'s gradient was computed from values overwritten through .data / a detached alias."""
    writes = ix.corrupting_writes()
    if not writes:
        return None
    cone = {x.index for x in ix.cone(tid)}
    for w, cut, saver in writes:
        if saver.index not in cone and saver.index != ix.d.tensors[tid].producer:
            continue
        orig = ix.label(cut.inputs[0].tid)
        return found(
            Cause.INPLACE_SAVED_TENSOR, w.site, name, "corrupting_write", name, status, orig, w, saver,
            evidence=[w, cut, saver])
    return None
