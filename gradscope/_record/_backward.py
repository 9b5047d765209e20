"""Backward watching, the per-call part: the graph walk that decides which nodes to hook, and
what the call leaves in the trace (leaf gradients, statuses, steps=).

``Backward`` owns what backward calls leave until the trace is queried (their raw node lists), the
count of calls (``steps=``) and which leaf each ``.grad`` tensor belongs to (``grad_of``).
"""
from __future__ import annotations

import re
import sys
from functools import partial

import torch

from ..core.model import BackwardRecord, GradInfo
from . import _frames, _values
from ._compat import backward_hooks, node_sequence_nr, post_accumulate_grad_hooks
from ._frames import F_BACKWARD
from ._graph import (
    PRESENT, _NODE_NAMES, _ACCUMULATE, _PASS_THROUGH, _M_LEAF, _M_LEAF_SEEN, _M_PASS, _M_NODE, _M_HOOK, _M_SKIP,
    _M_LOST, _MUST_HOOK, _must_hook, _node_post, _edge_norms, _build_backward,
)
from ._norms import _grad_status, _grad_statuses
from ._ops import _T, _tensors, context_of
from ._records import BackwardState, HookState, PendingBackward, RawEvent, RawNode, error_key
from ._refs import _pk, _tid_of
from ._saved import _FREED
from ._trampoline import _caller

_NONFINITE_ERROR = re.compile(r"returned nan values|returned inf values|nan values in its")  # (anomaly mode)


class Backward:
    """A backward call (``run``): its graph walked and hooked before, what arrived read after."""

    def __init__(self, sink, engine, saved, steps, grad_of):
        self._sink = sink
        self._data, self._events, self._tensors = sink.data, sink.events, sink.tensors
        self._internal, self._guard, self._note = sink.internal, sink.guard, sink.note
        # the recorder: tensor ids and refs, the frame walk, the hooks the call recorder saw, the limit
        self._engine = engine
        self._saved = saved
        self._steps = steps
        self.count = 0  # backward calls recorded
        self.pending: dict = {}  # id(BackwardRecord) -> PendingBackward (turned into its nodes on query)
        self._tuples: dict = {}  # interned edge tuples of backward nodes
        self.grad_of = grad_of  # the identity's id(.grad tensor) -> leaf tid: filled here after each backward
        self._grad_of_limit = 1024

    def forget(self):
        """After the recording's conversion."""
        self._tuples = {}

    def run(self, api, func, args, kwargs):
        self._engine.set_in_optimizer(False)
        try:
            rec, handles, state = self._pre(api, args, kwargs)
        except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
            self._internal(e)
            return func(*args, **kwargs)
        try:
            # (from the user's line, above _other_call and the mode: a warning torch.autograd.grad
            # raises with stacklevel=2 points there, as plain; see _caller)
            out = _caller(sys._getframe(3))(func, args, kwargs)
        except BaseException as e:
            for h in handles:
                h.remove()
            self._guard(self._post, rec, state, None, e)
            raise
        for h in handles:
            h.remove()
        self._guard(self._post, rec, state, out, None)
        return out

    def _pre(self, api, args, kwargs):
        eng = self._engine
        if api == "torch.autograd.grad":
            roots = args[0] if args else kwargs.get("outputs")
            inputs = args[1] if len(args) > 1 else kwargs.get("inputs")
        else:
            roots = args[0] if args else kwargs.get("tensors")
            inputs = kwargs.get("inputs")
        roots = _tensors(roots if isinstance(roots, (list, tuple)) else [roots], [])
        inputs_t = _tensors(inputs if isinstance(inputs, (list, tuple)) else [inputs], []) if inputs is not None else []
        raw, flags = eng.modules.where(sys._getframe())
        refs = tuple(eng.identity.pack(roots))
        in_refs = tuple(eng.identity.pack(inputs_t))
        idx = len(self._events)
        ev = RawEvent(idx, "backward", api, raw, refs, in_refs,
                   torch.is_grad_enabled(), torch.is_inference_mode_enabled(), eng.modules.current_module(),
                   # the torch/autograd/__init__ frame that dispatched this very call is not a region
                   context_of(flags & ~F_BACKWARD, True), None,
                   {"api": api, "roots": [_tid_of(r) for r in refs], "inputs": [eng.identity.tid(t) for t in inputs_t],
                    "create_graph": bool(kwargs.get("create_graph", False)),
                    "retain_graph": bool(kwargs.get("retain_graph") or (len(args) > 2 and api == "Tensor.backward" and args[2]))})
        self._events.append(ev)
        rec = BackwardRecord(idx, api, tuple(_tid_of(r) for r in refs))
        # Walk the graph once: number the nodes (breadth first) and note what each is; then hook the
        # nodes needed to see every edge (below) for this call. Everything else (BackwardNode objects, which nodes ran, what
        # arrived where) is built from these plain lists when the trace is first queried.
        nodes = {}  # node -> nid
        order = []
        for t in roots:
            gf = t.grad_fn
            if gf is not None and gf not in nodes:
                nodes[gf] = len(order)
                order.append(gf)
        rec.root_nodes = tuple(nodes[t.grad_fn] for t in roots if t.grad_fn is not None)
        node_ev, prehooked = self._saved.node_ev, eng.calls.prehooked
        raw_nodes = []  # [RawNode] by nid
        got = []  # by run order: (nid, gradients it sent, gradients it received) - or their norms
        leaves = []  # (nid, tid)
        names = _NODE_NAMES
        indeg = [0] * len(order)  # edges into each node
        n_roots = len(order)
        leaf_obs = api != "torch.autograd.grad" and not inputs_t  # a leaf's .grad shows what reached it
        opaque = set()  # nodes whose hook does not see what their parent sent (tensor hooks)
        hooked_leaves = []  # leaves with hooks (tensor or post-accumulate-grad)
        ids = eng.identity.ids
        i = 0
        while i < len(order) and i < 200_000:
            n = order[i]
            nf = n.next_functions
            nxt = []
            for nx, _ in nf:
                if nx is None:
                    nxt.append(None)
                else:
                    j = nodes.get(nx)
                    if j is None:
                        j = nodes[nx] = len(order)
                        order.append(nx)
                        indeg.append(1)
                    else:
                        indeg[j] += 1
                    nxt.append(j)
            nrs = [nr for _, nr in nf]
            tp = type(n)
            nm = names.get(tp)
            if nm is None:
                nm = n.name()
                if tp.__name__ in nm:  # a type per node kind (not a shared generic wrapper): cache it
                    names[tp] = nm
            if nm == _ACCUMULATE:
                var = n.variable
                r = ids.get(id(var))
                leaf = r.tid if r is not None and r() is var else eng.identity.tid(var) if isinstance(var, _T) else None
                if leaf is not None:
                    leaves.append((i, leaf))
                # what reached it is its .grad after backward, if it had none before and no hooks
                # (a post-accumulate hook may step and clear it: optimizer-in-backward)
                post_acc = post_accumulate_grad_hooks(var)
                bw_hooks = backward_hooks(var)
                if post_acc or bw_hooks:  # a hook may rewrite the gradient in place (`g.zero_()`,
                    hooked_leaves.append(i)  # a mask on .grad): what was sent is measured as it is sent
                if (post_acc or bw_hooks) and id(var) not in eng.calls.hooked and leaf is not None:
                    self._hooks_before_trace(var, leaf)
                mode = _M_LEAF_SEEN if (leaf_obs and leaf is not None and var.grad is None
                                        and not bw_hooks and not post_acc) else _M_LEAF
                raw_nodes.append(RawNode(nm, None, nxt, leaf, tp, mode, nrs))
            else:
                try:
                    sq = node_sequence_nr(n)
                    ev_i = node_ev.get(sq)
                    if sq in prehooked:  # a tensor hook changes what it receives
                        opaque.add(i)
                except (AttributeError, RuntimeError):  # (a node type without a sequence number)
                    ev_i = None
                mh = _MUST_HOOK.get(tp)
                if mh or (mh is None and _must_hook(tp, nm)):
                    mode = _M_HOOK
                elif ev_i is None and nm in _PASS_THROUGH and len(nxt) == 1:
                    mode = _M_PASS  # a transpose/view inside a torch function: it sends what it got
                else:
                    mode = _M_NODE  # hooked or not: decided below
                raw_nodes.append(RawNode(nm, ev_i, nxt, None, tp, mode, nrs))
            i += 1
        # Every edge's gradient must be seen from one end: the sender's hook (what it sent) or the
        # receiver's (what it got, when that edge is its only input), a leaf's .grad, or through a
        # pass-through node. Decided from the leaves up, about half the nodes of a chain need a hook.
        seen_in = [False] * len(raw_nodes)  # what reaches this node (its only input) is observed there
        hooked = []
        for i in range(len(raw_nodes) - 1, -1, -1):
            rn = raw_nodes[i]
            mode = rn.mode
            if mode == _M_NODE:
                for c in rn.next:
                    if c is not None and not seen_in[c]:
                        rn.mode = _M_HOOK
                        hooked.append(i)
                        # (what a node behind a tensor hook receives is not what was sent)
                        seen_in[i] = indeg[i] == 1 and i >= n_roots and i not in opaque
                        break
                else:
                    rn.mode = _M_SKIP
            elif mode == _M_LEAF_SEEN:
                seen_in[i] = indeg[i] == 1
            elif mode == _M_PASS:
                c = rn.next[0]
                seen_in[i] = indeg[i] == 1 and c is not None and seen_in[c]
            elif mode == _M_HOOK:  # always hooked; what it receives is not read
                hooked.append(i)
        # what a hooked node receives is only needed where an un-hooked parent's edge is read there
        need_go = [False] * len(raw_nodes)
        for rn in raw_nodes:
            if rn.mode == _M_SKIP:
                for c in rn.next:
                    while c is not None and raw_nodes[c].mode == _M_PASS:
                        c = raw_nodes[c].next[0]
                    if c is not None:
                        need_go[c] = True
        # senders into leaves whose .grad a post-accumulate hook may rewrite in place (and .grad may
        # be the very buffer sent): measure what they send at once, not when backward ends
        now = set()
        # (also: nodes behind a tensor hook, and leaves with hooks: a hook may change the buffer in place,
        # `g.zero_()`, before backward ends)
        if hooked_leaves or opaque:
            targets = set(hooked_leaves) | opaque
            for i, rn in enumerate(raw_nodes):
                for c in rn.next:
                    while c is not None and raw_nodes[c].mode == _M_PASS:
                        c = raw_nodes[c].next[0]
                    if c in targets:
                        now.add(i)
        handles = []
        hstate = HookState(got, raw_nodes, eng.identity.refs, need_go, now)
        for i in hooked:
            try:
                handles.append(order[i].register_hook(partial(_node_post, hstate, i)))
            except RuntimeError:  # (torch refuses a hook on this node: what it sent is taken from its neighbours)
                raw_nodes[i].mode = _M_LOST
        keep = bool(kwargs.get("retain_graph") or kwargs.get("create_graph")
                    or (api == "Tensor.backward" and len(args) > 2 and args[2]))
        return rec, handles, BackwardState(raw_nodes, got, leaves, inputs_t and [eng.identity.tid(t) for t in inputs_t],
                                           None if keep else order, order)

    def _hooks_before_trace(self, var, tid):
        """Hooks on a leaf registered before the trace began: recorded (once) as hook events without a
        registration site, so the diagnosis can still name the hook's line."""
        eng = self._engine
        eng.calls.hooked.add(id(var))
        for hooks, post in ((backward_hooks(var), False), (post_accumulate_grad_hooks(var), True)):
            for fn in list((hooks or {}).values()):
                detail = {"hook": _frames.callable_label(fn), "before_trace": True}
                fr = _frames.hook_return(fn)
                if fr is not None:
                    detail["hook_return"] = fr.to_json()
                if post:
                    detail["post_accumulate"] = True
                idx = len(self._events)
                self._events.append(RawEvent(idx, "hook", "torch.Tensor.register_post_accumulate_grad_hook" if post else
                                         "torch.Tensor.register_hook", (), (eng.identity.ref(var),), (),
                                         torch.is_grad_enabled(), False, None, "user", None, detail))

    def _post(self, rec, state, out, err):
        raw_nodes, got, leaves, input_tids, graph, nodes = state  # BackwardState
        eng = self._engine
        if graph and err is None and not input_tids:
            self._saved.new_graph()  # (a new graph follows)
            # this graph's saved tensors are freed now: remember it on the nodes that Saved.info
            # may probe later (those made by recorded ops), so it never has to
            for n, rn in zip(graph, raw_nodes):
                if rn.event is not None:
                    try:
                        n.metadata[_FREED] = True
                    except (AttributeError, RuntimeError):  # (a node without metadata)
                        pass
            op = self._saved.open
            if op:
                covered = {rn.event for rn in raw_nodes if rn.event is not None}
                op[:] = [x for x in op if x[0] not in covered]
        # Edge norms locate a zeroing or non-finite node; they are only needed when a leaf ends up
        # with a zero or non-finite gradient (or backward failed). Otherwise: "a gradient was sent".
        leaf_now = []  # (leaf tid, its .grad) right after this backward
        if rec.api != "torch.autograd.grad":
            refs = eng.identity.refs
            for _, tid in leaves:
                t = refs[tid]()
                if t is not None:
                    leaf_now.append((tid, t.grad))
        statuses = _grad_statuses([g for _, g in leaf_now])
        need = err is not None or rec.api == "torch.autograd.grad" or any(
            st == "zero" or st == "nonfinite" for st, _ in statuses)
        outs_of = _edge_norms(got, need)
        got.clear()
        if (err is not None and _NONFINITE_ERROR.search(str(err))) or any(st == "nonfinite" for st, _ in statuses):
            # where the non-finite value entered the forward: the values still readable now (see _values)
            rec.values = _values.scan(self._events, rec.event, eng.identity.refs, raw_nodes, nodes)
        if err is not None:
            rec.error = f"{type(err).__name__}: {err}"[:2000]
            self._sink.error_event = rec.event
            self._sink.error_key = error_key(err)
        self.count += 1
        ev = self._events[rec.event]
        leaf_val = {}  # tid -> norm of its .grad now (PRESENT: a gradient, not measurable; None: none)
        if rec.api != "torch.autograd.grad":
            grad_of = self.grad_of
            if len(grad_of) > self._grad_of_limit:  # drop the .grad tensors that are gone (zero_grad)
                alive = {k: v for k, v in grad_of.items() if eng.identity.grad_leaf_alive(k, v)}
                grad_of.clear()  # (in place: the identity and the call recorder hold it)
                grad_of.update(alive)
                self._grad_of_limit = max(1024, 2 * len(grad_of))
            tens = self._tensors
            cleared = eng.calls.cleared
            for (tid, g), (st, nm) in zip(leaf_now, statuses):
                if g is not None and cleared:
                    eng.calls.grad_refilled(tid)
                gi = GradInfo(st, nm, rec.event)
                rec.leaf_grads[tid] = gi
                tens[tid].grad = gi
                leaf_val[tid] = None if g is None else (nm if nm is not None else PRESENT)
                if g is not None:  # later writes into this .grad tensor are attributed to its leaf
                    grad_of[id(g)] = tid
        else:
            grads = out if isinstance(out, (tuple, list)) else ()
            outs = []
            for tid, g in zip(input_tids or (), grads):
                st, nm = _grad_status(g)
                rec.leaf_grads[tid] = GradInfo(st, nm, rec.event)
                if isinstance(g, _T):
                    outs.append(_pk(eng.identity.tid(g, producer=rec.event, link=False), g.requires_grad, g.is_leaf))
            ev.outputs = tuple(outs)
            if rec.event < eng.syncer.synced:  # (already converted by a query during this backward: again)
                self._sink.changed.append(rec.event)
        self._data.backwards.append(rec)
        self.pending[id(rec)] = PendingBackward(rec, raw_nodes, outs_of, leaf_val)
        if len(self._data.backwards) > 8:  # keep the graph details of the recent backward calls only
            old = self._data.backwards[-9]
            if self.pending.pop(id(old), None) is not None or old.nodes:
                old.nodes = {}
                self._note("graph details of backward calls older than the last 8 were dropped to save memory")
        if self._steps is not None and self.count >= self._steps:
            eng._limit_reached()
            self._data.truncated = True
            self._data.unseen.append(f"recording stopped after {self._steps} backward call(s) (steps={self._steps})")

    def build(self):
        """BackwardNode objects, ran flags, arrived norms and the first non-finite node of the
        backward calls recorded since the last query (pure: from the lists _backward_post kept)."""
        pend = self.pending
        self.pending = {}
        for rec, raw_nodes, seen, leaf_val in pend.values():  # PendingBackward
            _build_backward(rec, raw_nodes, seen, leaf_val, self._note, self._tuples)
