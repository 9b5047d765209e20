"""Rules for `.grad is None` (status `none`), in the order they run (see the table in __init__)."""
from __future__ import annotations

import re
from collections import defaultdict, deque

from ..core import _source
from ..core.model import Cause, Site
from . import templates as say  # noqa: F401  (registers the wording the findings here name)
from .common import _TO_OPS, _opname, _sgd_rebind, users_site
from .finding import found
from .registry import rule
from .wording import _code, _plain


def _subject(dx, q):
    """(tid, name, trace data, tensor info, producing event) of the question."""
    d = dx.d
    return q.tid, q.name, d, d.tensors[q.tid], d.producer(q.tid)


def _backwards(dx):
    """(every backward call, those that were not torch.autograd.grad)."""
    bws = dx.backward_events()
    return bws, [e for e in bws if e.op != "torch.autograd.grad"]


def _unfreeze(dx, q):
    """_unfreeze_missed, once per question: (finding or None, the unfreeze that did not reach it for a freeze's
    finding to name)."""
    return q.get("unfreeze", lambda: _unfreeze_missed(dx, q.tid, q.name))


def _cleared_unrefilled(dx, q):
    """The .grad = None clears after the last backward that filled the gradient, when no later run of that
    backward line refilled it (else None)."""
    def compute():
        tid, d = q.tid, dx.d
        bws, real = _backwards(dx)
        got = [b for b in d.backwards if b.api != "torch.autograd.grad" and tid in b.leaf_grads
               and b.leaf_grads[tid].status != "none"]
        if not got:
            return None
        last = got[-1].event
        clears = [e for e in dx.ev if e.kind == "grad_set" and e.index > last and tid in e.input_ids()
                  and e.detail.value is None]
        # a later backward refills it only if it reaches it: the same backward line again (the next step
        # of the loop). Another loss's backward (a GAN's D step) that never reaches it does not.
        fill = dx.ev[last]
        later_bw = [e for e in real if e.index > last and e.site is not None and fill.site is not None
                    and e.site.stack == fill.site.stack]
        if clears and not [b for b in later_bw if b.index > clears[-1].index]:
            return clears
        return None
    return q.get("cleared_unrefilled", compute)


@rule('none', 10)
def retain_grad_after_backward(dx, q):
    """A non-leaf whose retain_grad() ran only after the backward."""
    tid, name, d, info, prod = _subject(dx, q)
    if q.is_leaf or not q.retains:
        return None
    rg = [e for e in dx.ev if _opname(e) == "retain_grad" and tid in e.input_ids()]
    bws = [e for e in dx.backward_events() if e.op != "torch.autograd.grad"]
    if rg and bws and rg[0].index > bws[-1].index:
        site = prod.site if prod else rg[0].site
        return found(
            Cause.NON_LEAF_NO_RETAIN_GRAD, site, name, "retain_grad_after_backward", name, site, rg,
            evidence=[x for x in (prod, rg[0]) if x])
    return None


@rule('none', 20)
def to_copy_is_not_a_leaf(dx, q):
    """The name was rebound to a .to()/.double() copy of a leaf that requires grad."""
    tid, name, d, info, prod = _subject(dx, q)
    if q.is_leaf or q.retains:
        return None
    src = prod.inputs[0] if prod is not None and prod.inputs else None
    if (prod is not None and _opname(prod) in _TO_OPS and src is not None and src.is_leaf
            and src.requires_grad):
        site = prod.site
        return found(
            Cause.LEAF_REPLACED_BY_TO, site, name, "to_copy_is_not_a_leaf", name, site, prod,
            evidence=[prod])
    return None


@rule('none', 30)
def non_leaf(dx, q):
    """A non-leaf without retain_grad(): PyTorch fills .grad of leaves only."""
    tid, name, d, info, prod = _subject(dx, q)
    if q.is_leaf or q.retains:
        return None
    site = prod.site if prod else None
    computed = None
    if prod is not None and site is not None and "Parameter(" in (site.code or "") and any(
            dx.d.tensors.get(r.tid) is not None and dx.d.tensors[r.tid].role == "param"
            for r in prod.inputs):
        # `self.U = nn.Parameter(torch.randn(d, r)) * 0.02`: the Parameter is a temporary, the module
        # holds a computed tensor (not registered, not in the optimizer)
        m = re.search(r"((?:nn\.|torch\.nn\.)?Parameter)\((.*)\)\s*([-+*/@])\s*(.+)$", _plain(site))
        computed = m.groups() if m else ()
    return found(
        Cause.NON_LEAF_NO_RETAIN_GRAD, site, name, "non_leaf", name, site, computed,
        evidence=[prod] if prod else [])


@rule('none', 40)
def used_before_requires_grad(dx, q):
    """A leaf used before requires_grad was turned on."""
    tid, name, d, info, prod = _subject(dx, q)
    if not (q.requires_grad and q.is_leaf):
        return None
    uses = [e for e in dx.ev if e.context == "user" and e.kind in ("op", "cut", "module")
            and tid in e.input_ids()]
    late = [e for e in dx.ev if e.kind == "requires_grad" and e.detail.value and tid in e.input_ids()]
    if uses and late and all(not r.requires_grad for e in uses for r in e.inputs if r.tid == tid) \
            and late[0].index > uses[0].index:
        site = prod.site if prod else uses[0].site
        return found(
            Cause.REQUIRES_GRAD_FALSE, site, name, "used_before_requires_grad", name, site, uses, late,
            evidence=[x for x in (prod, uses[0], late[0]) if x])
    return None


@rule('none', 50)
def buffer(dx, q):
    """A buffer of the model (state, not a parameter)."""
    tid, name, d, info, prod = _subject(dx, q)
    if q.requires_grad:
        return None
    if info.role != "buffer":
        return None
    site = prod.site if prod else None
    return found(Cause.REQUIRES_GRAD_FALSE, site, name, "buffer", name, site, evidence=[prod] if prod else [])


@rule('none', 55)
def param_replaced(dx, q):
    """The parameter left the model: its module path now holds another parameter (or module), so whatever else
    happened to it (frozen, cleared by zero_grad), no forward reaches it. One the model still holds (a child
    reused by the new module) is not: its own rules decide."""
    left = dx.d.meta.get("left_model")
    if left is not None and q.tid not in left:  # (None: no model was called, so none holds it)
        return None
    return dx.replaced_finding(q.tid, q.name)  # (before the value's path: a new Parameter made from it is no cut)


@rule('none', 60)
def unfreeze_kept_away(dx, q):
    """An unfreeze ran, but a condition around it kept it from this parameter."""
    if q.requires_grad:
        return None
    return _unfreeze(dx, q)[0]


@rule('none', 70)
def frozen_in_trace(dx, q):
    """Frozen (requires_grad=False) by a call the trace saw."""
    tid, name, d, info, prod = _subject(dx, q)
    if q.requires_grad:
        return None
    unreached = _unfreeze(dx, q)[1]
    req = [e for e in dx.ev if e.kind == "requires_grad" and tid in e.input_ids() and e.detail.value is False]
    made = [e for e in req if e.detail.made_from is not None] if req and all(
        e.context == "distributed" for e in req) else []
    if made:  # (FSDP2 made its sharded form with the original's flag: the original's freeze is the user's)
        orig, at = made[-1].detail.made_from, made[-1].index
        req = [e for e in dx.ev[:at] if e.kind == "requires_grad" and orig in e.input_ids()
               and e.detail.value is False] or req
    if req:
        e = req[-1]
        whole = dx.froze_everything(e)
        site = users_site(e.site, dx.file_label)  # (a framework's freeze(): the user's call of it)
        return found(Cause.FROZEN_PARAM, site, name, "frozen_in_trace", name, unreached, whole, e, site, evidence=[e])
    return None


@rule('none', 80)
def created_frozen(dx, q):
    """A parameter created with requires_grad=False (nn.Parameter(..., requires_grad=False), freeze=True)."""
    tid, name, d, info, prod = _subject(dx, q)
    if q.requires_grad:
        return None
    if info.role != "param":
        return None
    unreached = _unfreeze(dx, q)[1]
    use = dx.first_use(tid)
    own = (d.meta.get("param_owner") or {}).get(str(tid))
    if own and own.get("site"):
        site = Site.from_json(own["site"])
        return found(
            Cause.FROZEN_PARAM, site, name, "created_frozen", name, unreached, site,
            evidence=[use] if use else [])
    return None


@rule('none', 90)
def frozen_before_trace(dx, q):
    """A parameter frozen before the trace started."""
    tid, name, d, info, prod = _subject(dx, q)
    if q.requires_grad:
        return None
    if info.role != "param":
        return None
    unreached = _unfreeze(dx, q)[1]
    use = dx.first_use(tid)
    return found(
        Cause.FROZEN_PARAM, use.site if use else None, name, "frozen_before_trace", name, unreached,
        evidence=[use] if use else [])


@rule('none', 100)
def manual_update_rebind(dx, q):
    """`w = w - lr * w.grad` under no_grad rebound the name to a new tensor."""
    tid, name, d, info, prod = _subject(dx, q)
    if q.requires_grad:
        return None
    w = _sgd_rebind(prod.site) if prod is not None and not prod.grad_enabled else None
    if w:  # `w = w - lr * w.grad` under no_grad: the name now holds a new tensor, not the leaf that trained
        site = prod.site
        return found(Cause.NO_GRAD_BLOCK, site, name, "manual_update_rebind", name, w, site, evidence=[prod])
    return None


@rule('none', 110)
def created_without_requires_grad(dx, q):
    """A tensor created without requires_grad."""
    tid, name, d, info, prod = _subject(dx, q)
    if q.requires_grad:
        return None
    site = prod.site if prod else (dx.first_use(tid).site if dx.first_use(tid) else None)
    return found(
        Cause.REQUIRES_GRAD_FALSE, site, name, "created_without_requires_grad", name, site,
        evidence=[prod] if prod else [])


@rule('none', 120)
def backward_failed(dx, q):
    """The backward that should have reached it raised."""
    tid, name, d, info, prod = _subject(dx, q)
    bws, real = _backwards(dx)
    failed = [b for b in d.backwards if b.error and any(n.leaf == tid for n in b.nodes.values())]
    if failed and d.exception is not None and failed[-1] is d.backwards[-1]:
        f = dx.failure_finding()
        if f is not None:
            return found(
                f.cause, f.site, name, "backward_failed", name, f,
                path=f.path, evidence=f.evidence)
    return None


@rule('none', 130)
def no_backward(dx, q):
    """No backward ran inside the trace."""
    name = q.name
    bws, real = _backwards(dx)
    if not bws:
        return found(Cause.NO_BACKWARD, None, name, "no_backward", name)
    return None


@rule('none', 140)
def autograd_grad_only(dx, q):
    """Gradients were computed with torch.autograd.grad / torch.func.grad only."""
    name = q.name
    bws, real = _backwards(dx)
    if not real:
        e = bws[-1]
        # torch.func.grad / grad_and_value / vjp run torch.autograd.grad inside functorch
        func_api = e.context == "functorch" or bool(e.site and re.search(r"(?<![\w.])(grad|grad_and_value|vjp)\(",
                                                                       _code(e.site)))
        api = "torch.func.grad" if func_api else "torch.autograd.grad"
        return found(
            Cause.AUTOGRAD_GRAD_NOT_BACKWARD, e.site, name, "autograd_grad_only", name, api, e, func_api,
            evidence=[e])
    return None


@rule('none', 150)
def post_accumulate_hook_cleared(dx, q):
    """A post-accumulate-grad hook cleared .grad after backward filled it."""
    return _hook_cleared(dx, q.tid, q.name)


@rule('none', 160)
def cleared_then_autograd_grad(dx, q):
    """Cleared on purpose, then the next gradient came from torch.autograd.grad."""
    tid, name = q.tid, q.name
    bws, real = _backwards(dx)
    clears = _cleared_unrefilled(dx, q)
    if not clears:
        return None
    ag = [b for b in bws if b.op == "torch.autograd.grad" and b.index > clears[-1].index
          and tid in (b.detail.inputs or ())]
    if ag:
        e = ag[-1]
        return found(
            Cause.AUTOGRAD_GRAD_NOT_BACKWARD, e.site, name, "cleared_then_autograd_grad", name, e, clears,
            evidence=[e, clears[-1]])
    return None


@rule('none', 170)
def cleared_before_read(dx, q):
    """Cleared (zero_grad / .grad = None) after backward and read cleared afterwards."""
    tid, name = q.tid, q.name
    if not _cleared_unrefilled(dx, q):
        return None
    t = dx.timing_problem(tid)  # only a read that found it cleared is the bug (evidence)
    if t is not None:
        return dx.timing_finding(tid, name, *t)
    return None


@rule('none', 180)
def backward_node_sent_none(dx, query):
    """The backward graph reached the leaf: the node that sent it nothing (a custom Function returning None, a compiled region)."""
    tid, name = query.tid, query.name
    d = dx.d
    for b in reversed(d.backwards):
        if b.api == "torch.autograd.grad":
            continue
        leaf_nodes = [n for n in b.nodes.values() if n.leaf == tid]
        if not leaf_nodes:
            continue
        parents = defaultdict(list)
        for n in b.nodes.values():
            for j, nx in enumerate(n.next):
                if nx is not None:
                    parents[nx].append((n, j))
        q = deque(l.nid for l in leaf_nodes)
        seen = set(q)
        while q:
            cur = q.popleft()
            for n, j in parents.get(cur, ()):
                if not n.ran:
                    if n.nid not in seen:
                        seen.add(n.nid)
                        q.append(n.nid)
                    continue
                out = n.out_norms[j] if j < len(n.out_norms) else None
                if out is None and "CompiledFunction" in n.name:
                    mods = [e for e in dx.ev if e.kind == "module" and e.op and name.startswith(e.op + ".")]
                    site = mods[0].site if mods else None
                    return found(
                        Cause.UNKNOWN, site, name, "backward_node_sent_none.compiled", name, site,
                        evidence=mods[:1])
                if out is None and n.custom_backward is None and n.nid not in seen:
                    seen.add(n.nid)  # it passed on nothing because it got nothing: look further up
                    q.append(n.nid)
                if out is None and n.custom_backward is not None:
                        direct = b.nodes.get(n.next[j]) is not None and b.nodes[n.next[j]].leaf == tid
                        f = n.custom_backward
                        site = dx.frame_site(f)
                        fe = dx.ev[n.event] if n.event is not None else None
                        return found(
                            Cause.CUSTOM_FUNCTION, site, name, "backward_node_sent_none.custom", name, j, direct, site, n,
                            evidence=[fe] if fe else [])
    return None


@rule('none', 190)
def reached_only_by_autograd_grad(dx, q):
    """Backward ran, but what it fed was differentiated only by torch.autograd.grad (a pipeline stage's input
    gradient): no .backward() reaches it, and autograd.grad fills no .grad."""
    bws, real = _backwards(dx)
    grads = [e for e in bws if e.op == "torch.autograd.grad"]
    if not grads or not real:
        return None  # (no backward at all: autograd_grad_only)

    def reaches(b):
        return bool(dx.path_to(q.tid, b.detail.roots or b.input_ids(), before=b.index))

    if any(reaches(b) for b in real):
        return None
    hit = [b for b in grads if reaches(b)]
    if not hit:
        return None
    e = hit[-1]
    return found(Cause.AUTOGRAD_GRAD_NOT_BACKWARD, e.site, q.name,
                 "reached_only_by_autograd_grad", q.name, dx.root_label(e), e, real[-1], evidence=[e])


@rule('none', 200)
def data_cut(dx, q):
    """A cut on the data path to a backward root (detach, no_grad, a NumPy round trip ...)."""
    bws, real = _backwards(dx)
    return dx.find_data_cut(q.tid, q.name, real)


def _unfreeze_missed(ix, tid, name):
    """An unfreeze (requires_grad = True) ran for other parameters but never reached this frozen one.
    (finding, unreached): the finding when a condition around the unfreeze (`if p.requires_grad:
    p.requires_grad = flag`) kept it away, else (the unfreeze, how many it reached) for the freeze's finding to
    name (None when none ran)."""
    info = ix.d.tensors[tid]
    if info.role != "param":
        return None, None
    last_off = max((e.index for e in ix.ev if e.kind == "requires_grad" and tid in e.input_ids()
                    and e.detail.value is False), default=-1)
    ons = [e for e in ix.ev if e.kind == "requires_grad" and e.detail.value is True and e.context == "user"
           and e.index > last_off and e.site is not None and tid not in e.input_ids()
           and any(ix.d.tensors.get(t) is not None and ix.d.tensors[t].role == "param" for t in e.input_ids())]
    if not ons or any(e.kind == "requires_grad" and tid in e.input_ids() and e.detail.value is True
                      for e in ix.ev):
        return None, None
    on = ons[-1]
    reached = {t for e in ons if e.site.stack == on.site.stack for t in e.input_ids()}
    guard = _source.enclosing_condition(on.site.filename, on.site.lineno)
    if guard is not None:
        site = Site(on.site.filename, guard[0], on.site.function, guard[1], on.site.stack, on.site.label)
    else:  # no guard in sight: the freeze is the cause; say that the unfreeze ran and did not reach it
        return None, (on, len(reached))
    return found(Cause.FROZEN_PARAM, site, name, "unfreeze_kept_away", name, on, site, guard[1], len(reached),
                 evidence=[on]), None


def _hook_cleared(ix, tid, name):
    """A gradient reached the leaf's AccumulateGrad, yet .grad is None right after that backward, and a
    post-accumulate-grad hook is registered on it (optimizer-in-backward in a training framework: the hook
    steps and clears .grad)."""
    hooks = [h for h in ix.ev if h.kind == "hook" and tid in h.input_ids() and h.detail.post_accumulate]
    if not hooks:
        return None
    for b in reversed(ix.d.backwards):
        g = b.leaf_grads.get(tid)
        arrived = b.arrived.get(tid)
        if g is None or g.status != "none" or not arrived or not (arrived > 0 or arrived == -1.0):
            continue
        h = hooks[-1]
        site = ix.hook_site(h)
        steps = [e for e in ix.ev if e.kind == "optimizer_step" and e.index > b.event
                 and tid in (e.detail.params or ())]
        return found(
            Cause.HOOK_MODIFIED, site, name, "post_accumulate_hook_cleared", name, steps, site, arrived, h,
            evidence=[h])
    return None
