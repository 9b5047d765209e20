"""Backward watching, the per-node part: the hooks on graph nodes during one backward call, what
they keep (within a memory budget), and the BackwardNode objects built from it on first query.
"""
from __future__ import annotations

import math


from ..core.model import BackwardNode
from . import _frames
from ._compat import (
    dispatch_stack_len as _dispatch_len, function_stack_len as _stack_len, backward_hooks, ACCUMULATE_GRAD,
    BACKWARD_HOOK_NODE, COMPILED_NODE, PASS_THROUGH_NODES, forward_cls,
)
from ._norms import _Own, _flush_norms, _norm
from ._ops import _T


PRESENT = -1.0  # an edge norm that was not measured: a gradient was sent (non-zero as far as we know)


_CUSTOM_BW: dict = {}  # node type -> Frame of its custom backward's return (or None)


_NODE_NAMES: dict = {}  # node type -> node.name()


_ACCUMULATE = ACCUMULATE_GRAD


_PASS_THROUGH = PASS_THROUGH_NODES


# how each graph node is watched during one backward call
_M_LEAF, _M_LEAF_SEEN, _M_PASS, _M_NODE, _M_HOOK, _M_SKIP, _M_LOST = range(7)


_MUST_HOOK: dict = {}  # node type -> bool


def _must_hook(tp, nm) -> bool:
    """Nodes whose own hook is always wanted: custom Function backwards, module backward hooks and
    compiled regions (the diagnosis looks at exactly what they sent)."""
    r = _MUST_HOOK.get(tp)
    if r is None:
        r = forward_cls(tp) is not None or BACKWARD_HOOK_NODE in nm or COMPILED_NODE in nm
        if tp.__name__ in nm:  # (a type per node kind)
            _MUST_HOOK[tp] = r
    return r


_BIG = 16384  # gradients with more elements count against the budget below


# Big gradients kept per backward call until it ends (beyond: measured at once). Small: holding
# big buffers longer than autograd would makes the CPU allocator hand out fresh pages every step.
_HOLD_BYTES = 1 << 20


def _node_post(state, nid, gi, go):
    """The post hook on one node for one backward call (bound with functools.partial): note that
    it ran and keep what it sent and received until backward ends. Their norms are only needed if a
    leaf ends up zero or non-finite, so usually they are never computed. Big gradients are kept
    within a memory budget (_HOLD_BYTES per backward call) and measured at once beyond it; one sent
    straight into a hook-free leaf is not kept (its accumulated .grad is measured afterwards, and
    holding it would make AccumulateGrad copy it)."""
    got = state.got
    if nid in state.measure_now:
        gi = tuple(g if g is None or isinstance(g, float) else _norm(g) for g in gi)
    for g in gi:
        if g is not None and not isinstance(g, float) and g.numel() > _BIG:
            gi = _keep_big(state, nid, gi, True)
            break
    if state.need_received[nid]:
        for g in go:
            if g is not None and g.numel() > _BIG:
                go = _keep_big(state, nid, go, False)
                break
    else:
        go = ()
    got.append((nid, _held(gi), _held(go) if go else go))
    if len(got) % 256 == 0:  # bound the memory held: measure what is kept so far
        _edge_norms(got, True, in_place=True)
    return None


def _held(grads):
    """What a hook keeps of the gradients it saw until backward ends: detached aliases (same memory, their
    own tensor objects). Holding the gradient tensors themselves would raise their reference count, and
    AccumulateGrad steals a buffer into a leaf's .grad only while nothing else references it: it would
    copy instead (one more gradient-sized allocation per leaf, and a .grad in other memory)."""
    try:
        if _stack_len() or _dispatch_len():  # (a user's mode below the recorder's stashed one, or a dispatch mode)
            with _Own():
                return tuple([g.detach() if type(g) is _T or isinstance(g, _T) else g for g in grads])
        return tuple([g.detach() if type(g) is _T or isinstance(g, _T) else g for g in grads])
    except (RuntimeError, NotImplementedError):  # (a gradient that cannot be detached here, e.g. a batched one under
        # vmap, or a subclass without detach: kept as is)
        return grads


def _keep_big(state, nid, grads, sent):
    raw_nodes, refs = state.raw_nodes, state.refs
    nxt = raw_nodes[nid].next
    outs = []
    for j, g in enumerate(grads):
        if g is None or isinstance(g, float):
            outs.append(g)
            continue
        n = g.numel()
        if n <= _BIG:
            outs.append(g)
            continue
        if sent:
            c = nxt[j] if j < len(nxt) else None
            leaf = raw_nodes[c].leaf if c is not None and c < len(raw_nodes) else None
            if leaf is not None:
                var = refs[leaf]() if leaf in refs else None
                if var is not None and not backward_hooks(var):
                    outs.append(PRESENT)
                    continue
        nb = n * g.element_size()
        if state.held_bytes + nb <= _HOLD_BYTES:
            state.held_bytes += nb
            outs.append(g)
        else:
            outs.append(_norm(g))
    return tuple(outs)


def _edge_norms(got, need, in_place=False):
    """(nid, sent, received) entries -> {nid: (sent norms, received norms)}. Without ``need``:
    PRESENT for every gradient (not worth measuring when every leaf got a healthy gradient)."""
    if need:
        pending = []  # (list, index, grad): one foreach call for all of them
        rows = []
        for nid, gi, go in got:
            a, b = list(gi), list(go)
            for lst in (a, b):
                for j, g in enumerate(lst):
                    if isinstance(g, _T):
                        pending.append((lst, j, g))
            rows.append((nid, a, b))
        _flush_norms(pending)
        if in_place:
            got[:] = [(nid, tuple(a), tuple(b)) for nid, a, b in rows]
            return None
        return {nid: (tuple(a), tuple(b)) for nid, a, b in rows}
    out = {}
    for nid, gi, go in got:
        out[nid] = (tuple(None if g is None else (g if type(g) is float else PRESENT) for g in gi),
                    tuple(None if g is None else (g if type(g) is float else PRESENT) for g in go))
    return out


def _build_backward(rec, raw_nodes, seen, leaf_val, note, interned=None):
    """BackwardNode objects from the walk's lists and what the hooks saw (``seen``: nid -> (sent,
    received) norms). Un-hooked nodes get what they sent from the receiving end of each edge.
    ``interned``: equal edge tuples share one object (a training loop's backwards repeat one graph)."""
    interned = {} if interned is None else interned
    nodes = rec.nodes

    def received(c, k, depth=0):  # what node c got on its input k (c has only that input edge)
        rc = raw_nodes[c]
        m = rc.mode
        if m == _M_HOOK:
            d = seen.get(c)
            if d is None:
                return None  # it never ran: nothing reached it
            return d[1][k] if k < len(d[1]) else None
        if m == _M_LEAF_SEEN:
            return leaf_val.get(rc.leaf)
        if m == _M_PASS and depth < 64 and rc.next[0] is not None:
            return received(rc.next[0], rc.input_nrs[0], depth + 1)
        return PRESENT

    sent: dict = {}  # nid -> tuple of what it sent along each edge (for nodes that ran)
    for nid, rn in enumerate(raw_nodes):
        m = rn.mode
        if m == _M_HOOK:
            d = seen.get(nid)
            if d is not None:
                sent[nid] = d[0]
        elif m == _M_SKIP:
            sent[nid] = tuple(None if c is None else received(c, rn.input_nrs[j]) for j, c in enumerate(rn.next))
    # pass-through nodes (and nodes whose hook could not be set) send on what their parents sent them
    parents: dict = {}
    for nid, rn in enumerate(raw_nodes):
        for j, c in enumerate(rn.next):
            if c is not None:
                parents.setdefault(c, []).append((nid, j))
    changed = True
    while changed:  # the rest, from their parents (a few rounds at most)
        changed = False
        for nid, rn in enumerate(raw_nodes):
            if rn.mode in (_M_PASS, _M_LOST) and nid not in sent:
                vals = [sent[p][j] for p, j in parents.get(nid, ()) if p in sent and j < len(sent[p])]
                got = [v for v in vals if v is not None]
                if got or (vals and len(vals) == len(parents.get(nid, ()))):
                    v = (got[0] if len(got) == 1 else PRESENT) if got else None
                    sent[nid] = (v,) * max(len(rn.next), 1) if rn.mode == _M_LOST else (v,)
                    changed = True
    # incoming gradient per node; a node that is not hooked ran when something reached it
    incoming: dict = {}
    for nid, outs in sent.items():
        for j, c in enumerate(raw_nodes[nid].next):
            if c is not None:
                incoming.setdefault(c, []).append(outs[j] if j < len(outs) else None)
    ran = list(seen)  # hooked ones, in the order they ran
    roots = set(rec.root_nodes)
    for nid, rn in enumerate(raw_nodes):
        if rn.mode != _M_HOOK and nid in sent and rn.leaf is None:
            if nid in roots or any(v is not None for v in incoming.get(nid, ())):
                ran.append(nid)
    ran_set = set(ran)
    for nid, rn in enumerate(raw_nodes):
        nm, ev_i, nxt, leaf, tp = rn.name, rn.event, rn.next, rn.leaf, rn.type
        cb = _CUSTOM_BW.get(tp, _MISSING)
        if cb is _MISSING:
            fwd = forward_cls(tp)
            bwf = getattr(fwd, "backward", None) if fwd is not None else None
            while bwf is not None and hasattr(bwf, "__wrapped__"):  # @once_differentiable, user decorators
                bwf = bwf.__wrapped__
            fr = _frames.return_lines(bwf) if bwf is not None else None
            cb = _CUSTOM_BW[tp] = None if fr is None or fr.filename.startswith(_frames.TORCH_DIR) else fr
        if COMPILED_NODE in nm and not rec.compiled:
            rec.compiled = True
            note("a torch.compile'd region ran: gradscope cannot see the source lines inside it; which "
                 "parameters got gradients is decided from the gradients that actually arrived")
        r = nid in ran_set
        nx = tuple(nxt)
        nodes[nid] = BackwardNode(nid, nm, ev_i, interned.setdefault(nx, nx), r, sent.get(nid, ()) if r else (), leaf, cb)
    for nid, vals in incoming.items():  # a leaf ran when a gradient was sent to it
        n = nodes.get(nid)
        if n is not None and n.leaf is not None and any(v is not None for v in vals) and \
                any(p in ran_set for p, _ in parents.get(nid, ())):
            n.ran = True
    for n in nodes.values():
        if n.leaf is not None and n.nid in incoming:
            vals = [v for p_j, v in zip(parents.get(n.nid, ()), incoming[n.nid])
                    if v is not None and p_j[0] in ran_set]
            if vals and all(v == PRESENT for v in vals):  # not measured: the accumulated .grad's norm
                rec.arrived[n.leaf] = leaf_val.get(n.leaf) if leaf_val.get(n.leaf) is not None else PRESENT
            else:
                rec.arrived[n.leaf] = math.sqrt(sum(v * v for v in vals if v != PRESENT)) if vals else None
    # first node that produced a non-finite gradient from finite input (in the order nodes ran)
    for nid in ran:
        n = nodes[nid]
        if any(v is not None and not math.isfinite(v) for v in n.out_norms):
            inc = [v for p_j, v in zip(parents.get(nid, ()), incoming.get(nid, [])) if p_j[0] in ran_set]
            if all(v is None or math.isfinite(v) for v in inc):
                rec.first_nonfinite = nid
                break


_MISSING = object()
