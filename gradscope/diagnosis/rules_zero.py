"""Rules for an all-zero `.grad` (statuses `zero` and, per backward, `zero_node`)."""
from __future__ import annotations

import math

from ..core.model import Cause, Frame
from . import templates as say  # noqa: F401  (registers the wording the findings here name)
from .common import _ZERO_OPS, _opname, cleared_by_zero_grad
from .finding import found
from .registry import REGISTRY, rule


def _hooks(dx, q):
    """The tensor hooks registered on the tensor asked about."""
    return q.get("hooks", lambda: [e for e in dx.ev if e.kind == "hook" and q.tid in e.input_ids()])


def _zeroing(dx, q):
    """(node, event) that turned a non-zero incoming gradient into zero in the backward looked at."""
    b = q.backward
    return q.get(("zeroing", b.event), lambda: dx.zeroing_node(b, q.tid))


@rule('zero', 20)
def zeroed_after_backward(dx, q):
    """The gradient arrived non-zero, then something wrote zeros into .grad."""
    return _zeroed_after_backward(dx, q.tid, q.name)


@rule('zero', 30)
def retained_zeroed(dx, q):
    """A retained non-leaf: what reached its grad_fn node, and who zeroed it."""
    tid, name = q.tid, q.name
    info = dx.d.tensors.get(tid)
    if info is None or info.is_leaf:
        return None
    return _zero_retained(dx, tid, name, _hooks(dx, q))


@rule('zero', 40, delegates='zero_node')
def zeroed_in_backward(dx, q):
    """Per backward (newest first), the `zero_node` rules: which node zeroed it."""
    for b in reversed(dx.d.backwards):
        if q.tid not in b.leaf_grads:
            continue
        q.backward = b
        res = REGISTRY.first("zero_node", dx, q)
        if res is not None:
            return res
    return None


@rule('zero', 90)
def zero_unknown(dx, q):
    """The trace did not record which operation zeroed it."""
    name = q.name
    return found(Cause.ZERO_GRADIENT, None, name, "zero_unknown", name)


@rule('zero_node', 10)
def hook_replaced_gradient(dx, q):
    """A non-zero gradient arrived and a hook on the tensor replaced it."""
    tid, name = q.tid, q.name
    b = q.backward
    hooks = _hooks(dx, q)
    arrived = b.arrived.get(tid)
    if hooks and arrived and (arrived > 0 or arrived == -1.0):  # (-1: sent, not measured)
        return _hook_replaced(dx, hooks[-1], name, arrived)
    return None


@rule('zero_node', 20)
def custom_function_zero(dx, q):
    """A custom autograd.Function whose backward returns zero."""
    name = q.name
    node, e = _zeroing(dx, q)
    if node is not None and node.custom_backward is not None and e is None:
        f = node.custom_backward
        site = dx.frame_site(f)
        fn = node.name.replace("Backward", "")
        return found(Cause.CUSTOM_FUNCTION, site, name, "custom_function_zero", name, fn, site, evidence=[])
    return None


@rule('zero_node', 30)
def module_backward_hook_zero(dx, q):
    """A module backward hook that returns a zero gradient."""
    name = q.name
    node, e = _zeroing(dx, q)
    if node is not None and "BackwardHook" in node.name:
        mh = dx.d.meta.get("module_hooks") or {}
        frames = [(p, Frame.from_json(f)) for p, fs in mh.items() for f in fs]
        if frames:
            path, f = frames[0]
            site = dx.frame_site(f)
            return found(
                Cause.HOOK_MODIFIED, site, name, "module_backward_hook_zero", name, path, site,
                evidence=[])
    return None


@rule('zero_node', 40)
def tensor_hook_zero(dx, q):
    """A tensor hook on an intermediate result that returns zero."""
    name = q.name
    node, e = _zeroing(dx, q)
    if e is None:
        return None
    hk = [h for h in dx.ev if h.kind == "hook" and set(h.input_ids()) & set(e.output_ids())]
    if hk:
        h = hk[-1]
        site = dx.hook_site(h)
        tn = dx.label(h.input_ids()[0])
        return found(
            Cause.HOOK_MODIFIED, site, name, "tensor_hook_zero", name, tn, site, h, dx.late_binding(h),
            evidence=[h, e])
    return None


_MUL = {"mul", "__mul__", "__rmul__", "mul_", "__imul__", "multiply"}
#: activations whose second derivative is zero wherever it exists
_PIECEWISE = {"relu", "relu_", "leaky_relu", "leaky_relu_", "relu6", "hardtanh", "hardtanh_", "prelu", "rrelu",
              "abs", "clamp", "clip", "threshold"}
#: ops linear in the network's input (with the layers' weights fixed): they add no curvature
_LINEAR = {"linear", "addmm", "matmul", "__matmul__", "mm", "bmm", "conv1d", "conv2d", "cat", "stack", "add",
           "__add__", "__radd__", "sub", "__sub__", "__rsub__", "neg", "__neg__", "__getitem__", "view", "reshape",
           "squeeze", "unsqueeze", "transpose", "t", "permute", "contiguous", "flatten", "sum", "mean", "expand",
           "repeat", "dropout", "zeros_like", "ones_like", "full_like", "index_select", "gather", "split", "chunk",
           "narrow", "select", "embedding"}


def _grad_order(dx, tid, depth=0):
    """(order, the innermost outputs differentiated) when ``tid`` is a derivative taken by torch.autograd.grad (a
    second derivative: order 2), else (0, None)."""
    p = dx.d.producer(tid)
    hops = 0
    while p is not None and p.kind != "backward" and len(p.inputs) == 1 and hops < 4:  # (`g[0]`, `.squeeze()`)
        p, hops = dx.d.producer(p.inputs[0].tid), hops + 1
    if p is None or p.kind != "backward" or p.op != "torch.autograd.grad" or depth > 6:
        return 0, None
    roots = list(p.detail.roots or p.input_ids())
    inner = [_grad_order(dx, r, depth + 1) for r in roots]
    order = 1 + max((o for o, _ in inner), default=0)
    deepest = next((r for o, r in inner if o == order - 1 and r), None)
    return order, deepest or roots


@rule('zero_node', 45)
def piecewise_linear_curvature(dx, q):
    """A factor that is a second derivative of a ReLU network (piecewise linear: exactly zero) zeroed it (a PINN)."""
    node, e = _zeroing(dx, q)
    if e is None or _opname(e) not in _MUL:
        return None
    for r in e.inputs:
        order, roots = _grad_order(dx, r.tid)
        if order < 2:
            continue
        ops = [dx.ev[i] for i in sorted(dx.ancestors(roots)) if dx.ev[i].kind in ("op", "cut")
               and dx.ev[i].context == "user" and any(x.requires_grad for x in dx.ev[i].inputs)]
        pw = [x for x in ops if _opname(x) in _PIECEWISE]
        if pw and all(_opname(x) in _PIECEWISE or _opname(x) in _LINEAR for x in ops):
            act = pw[0]
            return found(Cause.ZERO_GRADIENT, act.site, q.name, "piecewise_linear_curvature", q.name, order,
                         _opname(act), act.site, e, evidence=[act, e])
    return None


@rule('zero_node', 50)
def zeroing_op(dx, q):
    """The op whose backward turned a non-zero gradient into zero (a dead ReLU, a saturated clamp, round/sign, sampling)."""
    name = q.name
    b = q.backward
    node, e = _zeroing(dx, q)
    if e is None:
        return None
    op = _opname(e)
    is_nd = e.cut == "zero_grad_op" or op in _ZERO_OPS
    cause = Cause.NONDIFFERENTIABLE_OP if is_nd else Cause.ZERO_GRADIENT
    single, hinge = _zero_op_facts(dx, e, b, op, is_nd)
    site = e.site
    if op in _MULS and not is_nd and e.site is not None:
        # a product with a factor that needs no grad (a mask, a pruning mask, a weighting): that factor is zero
        # where the gradient arrives; the product is the op (the site), where the factor was made comes next
        const = [r for r in e.inputs if not r.requires_grad]
        p = dx.d.producer(const[0].tid) if len(const) == 1 else None
        if p is not None and p.site is not None and p.site.short != e.site.short:
            res = found(Cause.ZERO_GRADIENT, e.site, name, "zeroing_op.mask", name, op, e.site, node,
                        dx.label(const[0].tid), p.site, evidence=[e, p])
            res.extra_sites.append(p.site)
            return res
    return found(cause, site, name, "zeroing_op", name, op, site, node, e, is_nd, single, hinge, evidence=[e])


_MULS = {"mul", "__mul__", "__rmul__", "mul_", "__imul__"}


@rule('zero_node', 60)
def cancelled_uses(dx, q):
    """Several uses sent it non-zero gradients that sum to exactly zero (a WGAN critic's last bias): by design."""
    hit = dx.cancelled(q.tid)
    if hit is None or hit[0] is not q.backward:
        return None
    b, sent = hit
    root = dx.d.producer(b.roots[0]) if b.roots else None
    bw = dx.ev[b.event] if 0 <= b.event < len(dx.ev) else None
    site = root.site if root is not None and root.site is not None else (bw.site if bw is not None else None)
    acc = {n.nid for n in b.nodes.values() if n.leaf == q.tid}
    uses = [dx.ev[n.event] for n in b.nodes.values() if n.ran and n.event is not None and acc.intersection(n.next)]
    return found(Cause.GRADIENT_CANCELLED, site, q.name, "cancelled_uses", q.name, sent, site, dx.root_label(bw) if bw
                 else None, evidence=uses)


def _zeroed_after_backward(ix, tid, name):
    """The gradient arrived non-zero, then something wrote zeros into .grad."""
    got = [b for b in ix.d.backwards if b.api != "torch.autograd.grad" and tid in b.leaf_grads
           and b.leaf_grads[tid].status == "received"]
    if not got:
        return None
    last = got[-1].event
    for e in ix.ev[last + 1:]:
        if e.kind != "inplace":
            continue
        grads_of = e.detail.grads_of or [e.detail.grad_of]
        if tid not in grads_of:
            continue
        op = _opname(e)
        if op in ("zero_", "fill_", "_foreach_zero_") or "zero_grad" in (e.site.code if e.site else ""):
            t = ix.timing_problem(tid)  # only a read that found the zeros is the bug (evidence)
            return timing_finding(ix, tid, name, *t) if t is not None else None
        return found(
            Cause.ZERO_GRADIENT, e.site, name, "zeroed_after_backward", name, op, e,
            evidence=[e])
    return None


def _zero_retained(ix, tid, name, hooks):
    """.grad of a retained non-leaf is all zeros: what reached its grad_fn node, and who zeroed it."""
    p = ix.d.producer(tid)
    if p is None:
        return None
    for b in reversed(ix.d.backwards):
        node = next((n for n in b.nodes.values() if n.event == p.index), None)
        if node is None:
            continue
        sent = [q.out_norms[j] for q in b.nodes.values() for j, nx in enumerate(q.next)
                if nx == node.nid and j < len(q.out_norms) and q.out_norms[j] is not None and q.ran]
        arrived = math.sqrt(sum(v * v for v in sent if v > 0)) if sent else None
        if hooks and arrived:
            return _hook_replaced(ix, hooks[-1], name, arrived)
        zn, e = ix.zeroing_node(b, tid, start=[node])
        if e is not None:
            op = _opname(e)
            return found(
                Cause.ZERO_GRADIENT, e.site, name, "retained_zeroed", name, op, zn, e,
                evidence=[e])
    return None


def timing_finding(ix, tid, name, e, read):
    """`.grad` cleared after backward (``e``) and read cleared afterwards (``read``)."""
    zeroed = e.kind == "inplace"
    owners = {s.site.stack if s.site else s.index for s in ix.ev
              if s.kind == "optimizer_step" and tid in (s.detail.params or ())}
    # two optimizers hold it: one's zero_grad clears the other's
    shared = len(owners) if cleared_by_zero_grad(e) and len(owners) > 1 and not zeroed else 0
    return found(Cause.SET_TO_NONE_TIMING, e.site, name, "cleared_before_read", name, e, read, zeroed, shared,
                 evidence=[e, read])


def _hook_replaced(ix, h, name, arrived):
    """A non-zero gradient arrived (norm ``arrived``; -1: sent, not measured) and the hook ``h`` zeroed it."""
    site = ix.hook_site(h)
    return found(Cause.HOOK_MODIFIED, site, name, "hook_replaced_gradient", name, h, site, arrived, ix.late_binding(h),
                 evidence=[h])


def _zero_op_facts(ix, e, b, op, is_nd):
    """(single, hinge) for an op whose backward zeroed the gradient: a softmax over a class dimension of size 1;
    a relu/clamp that is the hinge of the loss."""
    single = not is_nd and ix.single_class(e)
    hinge = (not is_nd and not single and ("relu" in op or "clamp" in op)
             and ix.feeds_loss_directly(e, b))
    return single, hinge
