"""Read-only facts about a trace that the rules share: labels, reachability (ancestors, path_to, cone),
cuts on a path, regions and the governing grad mode, backward arrivals. Nothing here mutates the trace."""
from __future__ import annotations

import math
import re
from collections import defaultdict, deque

from ..core import _source
from ..core.model import Cause, Event, Frame, Site, TraceData
from . import nonfinite
from .common import (
    _LOSSES, CUT_CAUSE, _ASSIGN, _NO_SAVE, _SAVES_RESULT, _DUNDER_CALLS, _ESCAPES, _MODULE_NAMES, _NOT_FLOW, _NOT_FORWARD, _PARAMETRIZERS,
    _VALUE_KEEPING, _find_in_function, _first_arg, _opname, _receiver,
)




_AUGMENTED = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?:\+|-|\*|/|//|@|%|\*\*)=")  # `total_loss += loss`


def _up_to_event(node, parents, limit=16):
    """The event index of the first node with one, up ``node``'s single chain of callers in the graph (``parents``:
    nid -> [(node, edge)]; only nodes that ran), or None where the chain forks or ends first."""
    up, hops = node, 0
    while up.event is None and hops < limit:
        ps = [q for q, _ in parents.get(up.nid, ()) if q.ran]
        if len(ps) != 1:
            return None
        up, hops = ps[0], hops + 1
    return up.event


class Facts:
    """Queries over one TraceData (a base of :class:`~.index.TraceIndex`); cached where they are costly."""

    def __init__(self, data: TraceData):
        self.d = data
        self.ev = data.events
        self.query_tids: set = set()
        self.aliases: dict = {}  # tid -> the user's variable name (from why() callers)
        self._labels = {}  # file name -> how sites show it (notebook cells: "In[3]")
        for e in self.ev:
            if e.site is not None and e.site.label:
                self._labels.setdefault(e.site.filename, e.site.label)
        self.consumers = defaultdict(list)  # tid -> [event index]
        self.value_users = defaultdict(list)  # escape event index -> [event index using its value]
        for e in self.ev:
            for r in e.inputs:
                self.consumers[r.tid].append(e.index)
            for l in e.detail.links or ():
                if isinstance(l, int) and 0 <= l < len(self.ev):
                    self.value_users[l].append(e.index)
        # (tuples: a diagnosis is kept with its trace; a list per tensor holds a third more)
        self.consumers = defaultdict(tuple, ((t, tuple(v)) for t, v in self.consumers.items()))
        self.trainable = set(data.meta.get("trainable") or ())
        self._verdict_map = None  # event index -> "harmful" | "benign" (verdicts(); dropped when the live facts change)
        self._reach_cache: dict = {}
        self.now: dict = {}  # live facts per tid (set_now)
        self._status_cache: dict = {}

    def file_label(self, filename: str) -> str:
        return self._labels.get(filename, "")

    def late_binding(self, h: Event) -> str | None:
        """The free variable a hook shares with other hooks registered at the same line (lambdas made in a
        loop all read the loop variable's last value), or None."""
        cells = h.detail.cells
        if not cells or h.site is None:
            return None
        vals = h.detail.cell_values or []
        for o in self.ev:
            if o is not h and o.kind == "hook" and o.site is not None and o.site.stack == h.site.stack:
                ovals = o.detail.cell_values or []
                ocells = o.detail.cells or []
                for i, c in enumerate(cells):
                    if c not in ocells:
                        continue
                    # the same cell, holding different values when each hook was made: a loop variable
                    a = vals[i] if i < len(vals) else None
                    j = ocells.index(c)
                    b = ovals[j] if j < len(ovals) else None
                    if a is not None and b is not None and a != b:
                        names = h.detail.freevars or []
                        return names[i] if i < len(names) else "a variable"
        return None

    def hook_site(self, h: Event) -> Site | None:
        """Where a registered hook returns its value (else where it was registered)."""
        fr = h.detail.hook_return
        if not fr:
            return h.site
        return self.frame_site(Frame.from_json(fr), h.site.stack if h.site else ())

    def frame_site(self, f: Frame, outer=()) -> Site:
        """A Site for a line the recorder found by reading code (a hook's or backward's return),
        under the user frames ``outer`` that led there."""
        return Site(f.filename, f.lineno, f.function, f.code, tuple(outer) + (f,), self.file_label(f.filename))

    def label(self, tid) -> str:
        t = self.d.tensors.get(tid)
        if t is None:
            return f"t{tid}"
        if t.name:
            return t.name
        if tid in self.aliases:
            return self.aliases[tid]
        p = self.d.producer(tid)
        if p is not None and p.site is not None and p.site.code:
            last = self.last_on_line(p)
            if last is p and tid in p.output_ids():
                m = _ASSIGN.match(p.site.code) or _AUGMENTED.match(p.site.code)
                if m:
                    return m.group(1)
        return f"t{tid}"

    def last_on_line(self, e: Event) -> Event:
        """The last event recorded on the same source line (the one whose result is assigned)."""
        last = e
        n = len(e.site.stack) if e.site else 0
        for j in range(e.index + 1, min(len(self.ev), e.index + 64)):
            x = self.ev[j]
            if x.site is e.site or (x.site and e.site and x.site.stack == e.site.stack):
                if x.kind not in ("grad_mode", "module", "backward"):
                    last = x
            elif x.site and e.site and len(x.site.stack) > n and x.site.stack[:n] == e.site.stack \
                    and x.kind not in ("grad_mode", "module", "backward"):
                # a function called later from the same line (`loss = f(model(x))`): its result, not this
                # event's, is what the line assigns
                return x
            else:
                break
        return last

    def backward_events(self):
        return [e for e in self.ev if e.kind == "backward"]

    def events_on(self, tid):
        return [self.ev[i] for i in self.consumers.get(tid, ())]

    def ancestors(self, root_tids, before: int | None = None) -> set:
        """Event indices whose results flowed (as tensors or as linked values) into the roots."""
        key = (tuple(sorted(root_tids)), before)
        hit = self._reach_cache.get(key)
        if hit is not None:
            return hit
        seen_t = set()
        seen_e = set()
        q = deque(root_tids)
        while q:
            tid = q.popleft()
            if tid in seen_t:
                continue
            seen_t.add(tid)
            producers = []
            p = self.d.producer(tid)
            if p is not None:
                producers.append(p)
            # in-place writes into tid also feed it
            for i in self.consumers.get(tid, ()):
                x = self.ev[i]
                if x.kind in ("inplace", "cut") and x.detail.target == tid and (before is None or x.index < before):
                    producers.append(x)
            for e in producers:
                if e.index in seen_e or (before is not None and e.index >= before):
                    continue
                seen_e.add(e.index)
                for r in e.inputs:
                    q.append(r.tid)
                for l in e.detail.links or ():
                    if isinstance(l, int) and 0 <= l < len(self.ev) and l not in seen_e:
                        seen_e.add(l)
                        for r in self.ev[l].inputs:
                            q.append(r.tid)
        self._reach_cache[key] = seen_e
        return seen_e

    def path_to(self, tid, root_tids, before: int | None = None, no_writes: bool = False, avoid=()):
        """Shortest data path (list of events) from tensor ``tid`` to one of the roots. ``no_writes``: not
        through in-place writes (an EMA update `t.mul_(a).add_(b * p)` carries values, not the forward);
        ``avoid``: indices of events it may not go through."""
        anc = self.ancestors(root_tids, before)
        roots = set(root_tids)
        prev = {}
        q = deque([("t", tid)])
        seen = {("t", tid)}
        while q:
            kind, x = q.popleft()
            if kind == "t":
                if x in roots and x != tid:
                    return self._rebuild(prev, ("t", x))
                for i in self.consumers.get(x, ()):
                    if (no_writes and self.ev[i].kind == "inplace") or i in avoid:
                        continue
                    if i in anc and ("e", i) not in seen:
                        seen.add(("e", i))
                        prev[("e", i)] = (kind, x)
                        q.append(("e", i))
            else:
                e = self.ev[x]
                nxt = [("t", o) for o in e.output_ids()]
                tgt = e.detail.target if e.kind in ("inplace", "cut") else None
                if tgt is not None and not e.output_ids():  # a write: the value flows into its target
                    nxt.append(("t", tgt))
                nxt += [("e", j) for j in self.value_users.get(x, ()) if j in anc]
                for n in nxt:
                    if n not in seen:
                        seen.add(n)
                        prev[n] = (kind, x)
                        if n[0] == "t" and n[1] in roots:
                            return self._rebuild(prev, n)
                        q.append(n)
        if tid in roots:
            return []
        return None

    def _rebuild(self, prev, node):
        out = []
        while node in prev:
            if node[0] == "e":
                out.append(self.ev[node[1]])
            node = prev[node]
        out.reverse()
        return out

    def cone(self, tid, limit=100_000, through_copies=True):
        """Events downstream of ``tid`` (tensors and linked values), in order. ``through_copies=False``: not past a
        whole-value copy into another parameter (``load_state_dict``/``copy_`` filling a target network: a separate
        model by design, whose own uses are not this tensor's)."""
        seen_e = set()
        dead = set()
        seen_t = {tid}
        q = deque([tid])
        n = 0
        while q and n < limit:
            x = q.popleft()
            for i in self.consumers.get(x, ()):
                if i in seen_e:
                    continue
                seen_e.add(i)
                if self.ev[i].context in _NOT_FORWARD or self.ev[i].kind in _NOT_FLOW:
                    continue
                e = self.ev[i]
                if e.context == "library" and not any(self.consumers.get(o) for o in e.output_ids()):
                    dead.add(i)  # torch's own temporary (DDP broadcasting the parameters): not a use by the user
                    continue
                n += 1
                if not through_copies and e.kind == "inplace" and _opname(e) in ("copy_", "set_"):
                    tgt = self.d.tensors.get(e.detail.target) if e.detail.target is not None else None
                    if tgt is not None and tgt.role == "param" and e.detail.target != x:
                        continue
                for o in e.output_ids():
                    if o not in seen_t:
                        seen_t.add(o)
                        q.append(o)
                for j in self.value_users.get(i, ()):
                    if j not in seen_e:
                        seen_e.add(j)
                        for o in self.ev[j].output_ids():
                            if o not in seen_t:
                                seen_t.add(o)
                                q.append(o)
        return [self.ev[i] for i in sorted(seen_e)
                if self.ev[i].context not in _NOT_FORWARD and self.ev[i].kind not in _NOT_FLOW and i not in dead]

    def cut_on_path(self, path, tid):
        """The first event on a path where gradient stopped, or None."""
        flowing = {tid}
        for k, e in enumerate(path):
            if e.context == "setup":  # torch's own conversion of the parameters (model.to / .double): not a cut
                flowing.update(e.output_ids())
                continue
            if e.kind == "cut" and e.cut != "zero_grad_op":
                if any(r.requires_grad for r in e.inputs) or e.cut in _ESCAPES or e.cut in ("data_set",):
                    return k, e
            if e.detail.links and k > 0 and path[k - 1].kind == "cut":
                return k - 1, path[k - 1]
            if e.kind in ("op", "module") and e.context == "user":
                ins = [r for r in e.inputs if r.tid in flowing] or list(e.inputs)
                if ins and any(r.requires_grad for r in ins) and e.outputs and not any(r.requires_grad for r in e.outputs):
                    return k, e
            flowing.update(e.output_ids())
        return None

    def cause_of_cut(self, e: Event, path=None, k=None):
        """(cause, site event) for a cut event, looking ahead for numpy/item/tolist after a detach."""
        cause = CUT_CAUSE.get(e.cut or "", None)
        site_e = e
        if e.cut in ("detach", "data"):
            # follow the detached value a few steps (cpu(), contiguous(), ...): does it leave torch?
            frontier = set(e.output_ids())
            for x in self.ev[e.index + 1: e.index + 12]:
                if not frontier.intersection(x.input_ids()):
                    continue
                if x.kind == "cut" and x.cut in _ESCAPES:
                    # it left torch there if the escape is written with the detach (`y.detach().numpy()`) or is
                    # on the way (its value used again): a detached loss logged with .item() later was cut by the detach
                    same = x.site is not None and e.site is not None and x.site.stack == e.site.stack
                    if same or (path is not None and x in path) or self.value_users.get(x.index):
                        return CUT_CAUSE[x.cut], x
                    break
                if x.kind == "cut" and x.cut == "rewrap" and x.site and e.site and x.site.lineno == e.site.lineno \
                        and x.site.filename == e.site.filename:
                    return Cause.TENSOR_REWRAP, x
                if _opname(x) in _VALUE_KEEPING:  # (not through computations: `loss.item()` logged later is not it)
                    frontier.update(x.output_ids())
        if cause == "no_grad_block":
            g = self.governing_grad_mode(e)
            if g is not None and g.detail.lib_fn:
                lib = g.detail.lib_fn.rsplit(".", 1)[-1]
                if lib in _PARAMETRIZERS:  # it moved the weight into new Parameters: the old one is left behind
                    return Cause.PARAM_RECREATED, site_e
                return Cause.NONDIFFERENTIABLE_OP, site_e
        if cause is None:
            if not e.grad_enabled:
                cause = Cause.NO_GRAD_BLOCK
            elif e.inference_mode:
                cause = Cause.INFERENCE_MODE
            else:
                cause = Cause.NONDIFFERENTIABLE_OP
        return cause, site_e

    def governing_grad_mode(self, e: Event):
        for j in range(e.index - 1, max(-1, e.index - 5000), -1):
            g = self.ev[j]
            if g.kind == "grad_mode" and g.detail.enabled is False:
                return g
            if g.kind == "grad_mode" and g.detail.enabled is True:
                return None
        return None

    def region_site(self, e: Event) -> Site | None:
        """For a result computed with grad off: the line that switched it off, which is what the user changes.

        The innermost `with torch.no_grad():` / inference_mode / set_grad_enabled(False) block or
        ``@torch.no_grad()`` decorator around the op in the user's frames (read from the source), else the
        recorded switch (a set_grad_enabled(False) call, the user's call into a library function that switches
        grad off). The op's own stack is kept as the site's stack: the line that ran inside stays visible."""
        s = e.site
        if s is None or e.cut not in ("no_grad", "inference_mode", None):
            return s
        want = ("inference_mode",) if e.inference_mode else ("no_grad", "set_grad_enabled", "inference_mode")
        frames = s.stack or (s.frame(),)
        for fr in reversed(frames):
            for line, code, _kind in _source.region_openers(fr.filename, fr.lineno):
                if any(w in code for w in want):
                    return Site(fr.filename, line, fr.function, code, s.stack, self.file_label(fr.filename))
        if e.inference_mode:
            return s
        for j in range(e.index - 1, -1, -1):
            g = self.ev[j]
            if g.kind == "grad_mode" and g.context == "user" and g.site is not None:
                if g.detail.enabled is False:
                    return Site(g.site.filename, g.site.lineno, g.site.function, g.site.code, s.stack, g.site.label)
                break
        return s

    def froze_everything(self, e: Event):
        """(how many it froze, the freeze loop's receiver or None, whether the line is in a loop over
        named_modules()) when the line that froze this parameter froze every parameter in the trace (a freeze loop
        over named_modules() meets the whole model first, as ""), else None."""
        if e.site is None:
            return None
        frozen = {t for x in self.ev if x.kind == "requires_grad" and x.detail.value is False
                  and x.site is not None and x.site.stack == e.site.stack for t in x.input_ids()}
        params = {t.tid for t in self.d.tensors.values() if t.role == "param"}
        if len(frozen) < 2 or not params or not params <= frozen:
            return None
        loop = _find_in_function(e.site.filename, e.site.lineno, "named_modules(") if e.site.function else None
        if not loop:
            return len(frozen), None, False
        return len(frozen), _receiver(loop[1], ".named_modules("), True

    def first_use(self, tid):
        for i in self.consumers.get(tid, ()):
            e = self.ev[i]
            if e.context == "user" and e.kind not in ("requires_grad", "grad_set", "hook"):
                return e
        return None

    def root_label(self, b: Event) -> str:
        r = b.detail.roots or [x.tid for x in b.inputs]
        if not r:
            return "the loss"
        lab = self.label(r[0])
        if lab.startswith("t") and lab[1:].isdigit() and b.site and b.site.code:
            recv = _receiver(b.site.code, ".backward(")
            if recv:
                return recv
            p = self.d.producer(r[0])
            if p is not None:
                return f"{_opname(p)}(...)"
        return lab

    def lib_name(self, e) -> str:
        g = self.governing_grad_mode(e)
        lib = g.detail.lib_fn if g is not None else None
        return lib.rsplit(".", 1)[-1] if lib else "a parametrization"

    def cut_input_label(self, e: Event, tid) -> str:
        for r in sorted(e.inputs, key=lambda r: not r.requires_grad):  # (the input gradient should flow from)
            lab = self.label(r.tid)
            if not lab.startswith("t") or not lab[1:].isdigit():
                return lab
        # the expression the method was called on, as written: `torch.relu(self.fc1(x))`.detach()
        if e.site is not None and e.site.code:
            op = _opname(e)
            code = e.site.code
            dunder = _DUNDER_CALLS.get(op)
            if dunder:  # float(x), int(x)
                arg = _first_arg(code, dunder)
                if arg:
                    return arg
            recv = _receiver(code, f".{op}(") if op.isidentifier() else None
            if recv in _MODULE_NAMES or (recv and recv.split(".")[0] in ("torch", "np", "numpy")):
                recv = _first_arg(code, f".{op}(")  # torch.tensor(boxes): what it copies
            if recv and recv != "self":
                return recv
        # name after the module that produced the input
        for r in e.inputs:
            p = self.d.producer(r.tid)
            if p and p.module:
                return f"{p.module}'s output"
        return self.label(tid) if e.inputs and e.inputs[0].tid == tid else "the value"

    def defined_site(self, name) -> Site | None:
        """Where the module holding parameter ``name`` is defined in its owner's class (``self.extra = ...``),
        when the recorder found that line for a child that was never called."""
        defined = self.d.meta.get("uncalled_defined") or {}
        best = max((c for c in defined if name.startswith(c + ".")), key=len, default=None)
        if best is None:
            return None
        return self.frame_site(Frame.from_json(defined[best]))

    def guarded_read(self, name):
        """(the line reading parameter ``name`` or the module holding it, the skip before that line) as
        Sites, when the recorder found an ``if ...: continue`` before the read or an ``if`` around it."""
        g = self.d.meta.get("guarded_reads") or {}
        best = max((c for c in g if name == c or name.startswith(c + ".")), key=len, default=None)
        if best is None:
            return None
        return self.frame_site(Frame.from_json(g[best]["read"])), self.frame_site(Frame.from_json(g[best]["guard"]))

    def error_event(self):
        i = self.d.exception.event if self.d.exception else None
        if i is not None and 0 <= i < len(self.ev):
            return self.ev[i]
        return None

    def failing_backward(self):
        e = self.error_event()
        if e is not None and e.kind == "backward":
            return e
        bws = self.backward_events()
        return bws[-1] if bws else None

    def plain_containers(self) -> list:
        """Modules kept in plain lists, tuples and dicts of the models the trace saw (the recorder's
        ``meta["plain_containers"]``: owner, class, attr, kind, the assigning line, members)."""
        return self.d.meta.get("plain_containers") or []

    def container_of(self, tid):
        """(container, member) holding the parameter ``tid`` in a plain container, or None."""
        for c in self.plain_containers():
            for m in c["members"]:
                if tid in m["params"]:
                    return c, m
        return None

    def backward_record(self, bw):
        """The record of the backward pass the backward event ``bw`` ran (its graph), or None."""
        if bw is None:
            return None
        return next((b for b in reversed(self.d.backwards) if b.event == bw.index), None)

    def nonfinite_source(self, rec, named=None):
        """(node, forward event) where a backward pass first produced an inf/nan gradient: the first node whose
        gradient out was not finite, else the last node called ``named`` that ran (the one a message names);
        (None, None) when the trace saw neither."""
        node = rec.nodes.get(rec.first_nonfinite) if rec is not None and rec.first_nonfinite is not None else None
        if node is None and rec is not None and named:
            ran = [n for n in rec.nodes.values() if n.name == named and n.ran]
            node = ran[-1] if ran else None
        e = self.ev[node.event] if node is not None and node.event is not None and node.event < len(self.ev) else None
        return node, e

    def enclosing_event(self, rec, node):
        """The recorded call a backward node without one of its own belongs to (the addmm of a linear on 3-d
        input): see :func:`_up_to_event`; None when there is none."""
        if node is None:
            return None
        parents = {}
        for n in rec.nodes.values():
            for j, nx in enumerate(n.next):
                if nx is not None:
                    parents.setdefault(nx, []).append((n, j))
        i = _up_to_event(node, parents)
        return self.ev[i] if i is not None and i < len(self.ev) else None

    def nonfinite_entry(self, rec, target=None):
        """Where the inf/nan entered the forward (:func:`.nonfinite.entry`), or None."""
        return nonfinite.entry(self, rec, target)


    def custom_node(self, fname=None):
        """The latest backward node of a custom autograd.Function (named ``fname`` if given), or None."""
        for b in reversed(self.d.backwards):
            for n in b.nodes.values():
                if n.custom_backward is not None and (fname is None or n.name == fname):
                    return n
        return None

    def feeds_loss_target(self, e) -> bool:
        """The cut ``e``'s result goes straight into a loss function as its target, its second argument (the
        usual idiom of a detached or no_grad target: `mse_loss(z_q, z_e.detach())`), and nowhere else."""
        outs = set(e.output_ids()) | ({e.detail.target} if e.detail.target is not None else set())
        users = [self.ev[i] for t in outs for i in self.consumers.get(t, ())]
        return bool(users) and all(
            _opname(u) in _LOSSES and len(u.inputs) >= 2 and u.inputs[1].tid in outs
            and u.inputs[0].tid not in outs for u in users)

    def feeds_loss_directly(self, e, b) -> bool:
        """True when ``e``'s result reaches the backward root through reductions and arithmetic only (a few
        steps): a relu/clamp used as the hinge of a loss rather than as an activation."""
        roots = set(b.roots) if getattr(b, "roots", None) else set()
        if not roots:
            bev = self.ev[b.event] if 0 <= b.event < len(self.ev) else None
            roots = set((bev.detail.roots or bev.input_ids()) if bev is not None else ())
        frontier = set(e.output_ids())
        for _ in range(4):
            if frontier & roots:
                return True
            nxt = set()
            for t in frontier:
                for i in self.consumers.get(t, ()):
                    c = self.ev[i]
                    if c.kind == "module":
                        continue
                    if _opname(c) not in ("mean", "sum", "add", "__add__", "__radd__", "mul", "__mul__", "__rmul__",
                                          "div", "__truediv__", "sub", "__sub__", "__rsub__", "pow", "__pow__"):
                        return False
                    nxt |= set(c.output_ids())
            if not nxt:
                return False
            frontier = nxt
        return bool(frontier & roots)

    def single_class(self, e) -> bool:
        """A softmax / cross entropy over a class dimension of size 1: constant, zero gradient."""
        op = _opname(e)
        if not ("cross_entropy" in op or "softmax" in op or "nll" in op) or not e.inputs:
            return False
        t = self.d.tensors.get(e.inputs[0].tid)
        return t is not None and len(t.shape) >= 2 and t.shape[1] == 1

    def zeroing_node(self, b, tid, start=None):
        leaf_nodes = start if start is not None else [n for n in b.nodes.values() if n.leaf == tid]
        if not leaf_nodes:
            return None, None
        parents = defaultdict(list)
        for n in b.nodes.values():
            for j, nx in enumerate(n.next):
                if nx is not None:
                    parents[nx].append((n, j))
        incoming = {}

        def inc(nid):
            if nid in incoming:
                return incoming[nid]
            if nid in b.root_nodes:
                incoming[nid] = 1.0
                return 1.0
            vals = [p.out_norms[j] for p, j in parents.get(nid, ()) if j < len(p.out_norms) and p.out_norms[j] is not None]
            incoming[nid] = math.sqrt(sum(v * v for v in vals)) if vals else 0.0
            return incoming[nid]

        q = deque(n.nid for n in leaf_nodes)
        seen = set(q)
        while q:
            nid = q.popleft()
            for p, j in parents.get(nid, ()):
                if not p.ran:
                    continue
                out = p.out_norms[j] if j < len(p.out_norms) else None
                if (out is None or out == 0.0) and inc(p.nid) > 0.0:
                    if p.event is not None or "BackwardHook" in p.name or p.custom_backward is not None:
                        return p, (self.ev[p.event] if p.event is not None else None)
                    # a node inside a recorded call (LogSoftmaxBackward0 inside cross_entropy): that call
                    up = _up_to_event(p, parents)
                    if up is not None:
                        return p, self.ev[up]
                if p.nid not in seen:
                    seen.add(p.nid)
                    q.append(p.nid)
        return None, None

    # --- facts the cut wording needs (found here, worded by the templates) ----------------------------
    def computed_once_reused(self, e: Event) -> str:
        """For a value made (under no_grad / inference_mode) whose line never ran again although the function
        holding it (or one around it) was called again later: a cache filled once (e.g. by a validation call)
        and reused. Returns that function's name; else ""."""
        if e.site is None or not e.site.stack:
            return ""
        key = (e.site.filename, e.site.lineno)
        later = [x for x in self.ev[e.index + 1:] if x.site is not None and x.kind not in ("module", "backward", "grad_mode")]
        for fr in reversed(e.site.stack):  # the cut's own function first, then its callers
            if fr.function in ("<module>", "", None):
                break
            fn = (fr.filename, fr.function)
            left = False
            again = None
            for j, x in enumerate(later):
                if any((f.filename, f.function) == fn for f in x.site.stack):
                    if left:
                        again = j
                        break
                else:
                    left = True
            if again is not None:
                if any((x.site.filename, x.site.lineno) == key for x in later[again:]):
                    return ""  # called again, and computed it again
                name = fr.function
                return name.rsplit(".", 1)[0] if name.endswith(".forward") else name
        return ""

    def grad_switched_off_by(self, e: Event):
        """For a cut made with grad off: the grad_mode event of the call that switched grad off when it is not a
        `with` line or decorator in the cut's own call chain (a context manager's __enter__, a helper, a global
        switch); else None."""
        if e.site is None or e.cut != "no_grad":
            return None
        for j in range(e.index - 1, -1, -1):
            g = self.ev[j]
            if g.kind != "grad_mode" or g.context != "user" or g.site is None:
                continue
            if g.detail.enabled is not False:
                return None
            if any(fr.filename == g.site.filename and fr.function == g.site.function for fr in e.site.stack):
                return None  # a `with torch.no_grad():` / decorator the user can see around the line
            return g
        return None

    def nograd_lib(self, e):
        """The library function (qualified name) that ran the cut ``e`` under no_grad, or None."""
        if e.cut != "no_grad":
            return None
        g = self.governing_grad_mode(e)
        return (g.detail.lib_fn if g is not None else None) or None

    def corrupting_writes(self) -> list:
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
            a = alias.get(w.detail.target) or alias.get(w.detail.base)
            if a is None:
                continue
            cut, orig = a
            savers = [self.ev[i] for i in self.consumers.get(orig, ()) if i < w.index and self.ev[i].kind == "op"
                      and _opname(self.ev[i]) not in _NO_SAVE and _opname(self.ev[i]) not in _SAVES_RESULT]
            p = self.d.producer(orig)
            if p is not None and p.index < w.index and _opname(p) in _SAVES_RESULT:
                savers.insert(0, p)
            saver = next((x for x in savers if ran.get(x.index, -1) > w.index), None)
            if saver is not None:
                out.append((w, cut, saver))
        self._corrupt = out
        return out
