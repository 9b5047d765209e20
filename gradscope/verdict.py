"""The one verdict: which tensors a step starved, and whether a cut or a clear of ``.grad`` was to blame.

Pure rules over :class:`~gradscope.core.model.TraceData` (no torch), a base of
:class:`~gradscope.diagnosis.TraceIndex` (the other: :class:`~gradscope.diagnosis.facts.Facts`). Every surface (``why``, ``cuts(harmful=...)``,
``check()``, the report, the diagram, the CLI's JSON) decides through these functions, so they
cannot disagree:

* :meth:`VerdictRules.trains` -- the tensors the step is meant to train: those an optimizer
  holds when the trace saw one (a target network, an EMA teacher or a reloaded model run only
  for evaluation is not trained by the step); without an optimizer, every parameter and used
  leaf, except parameters no longer in the model and copies of a trained model run only without
  grad (same class and shapes: a target network, a reloaded best model).
* :meth:`VerdictRules.grad_status` -- the gradient a tensor got, by evidence: a ``.grad`` that
  backward filled and that was cleared (``zero_grad()``, ``.grad = None``) only after its
  consumers read it counts as received.
* :meth:`VerdictRules.starved` -- trainable, requires grad, and no usable gradient.
* :meth:`VerdictRules.bad_read` -- the evidence for ``set_to_none_timing``: a read of ``.grad``
  (user code, clipping, ``optimizer.step()``) that found None (or zeros) after the clear.
"""
from __future__ import annotations

from .core.model import Event

_ZEROING = ("zero_", "fill_", "_foreach_zero_")
_COPY_OPS = {"data", "detach", "clone", "copy_", "__deepcopy__", "__reduce_ex__", "requires_grad_", "_version"}
# contexts whose ops are part of the model's computation (not optimizer internals, init, clipping)
_FORWARD_CTX = ("user", "checkpoint", "compiled", "custom_function", "functorch")


def _op(e: Event) -> str:
    return (e.op or "").rsplit(".", 1)[-1]


class VerdictRules:
    """The verdict half of the TraceIndex (uses its facts: ``self.d``, ``self.ev``, ``self.trainable``,
    ``self.consumers``, ``self.cone``)."""

    now: dict

    def set_now(self, now) -> None:
        """Live facts about tensors (``.grad`` status read now); a change drops the cached statuses and verdicts."""
        now = dict(now or {})
        if now != getattr(self, "now", None):
            self.now = now
            self._verdict_map = None
            self._status_cache = {}

    # --- who should train -------------------------------------------------------------------------
    def trains(self, tid) -> bool:
        """Is ``tid`` meant to be trained by the step? Held by an optimizer when the trace saw one.
        Without one: the leaves the step used with requires_grad, and every parameter, except those
        only copied or built (out_of_model) and copies of a trained model run without grad (twin)."""
        if self.trainable:
            return tid in self.trainable
        t = self.d.tensors.get(tid)
        if t is None:
            return False
        if t.role == "param":
            return not self.out_of_model(tid) and not self.untrained_twin(tid)
        return tid in self._used_leaves()

    def _used_leaves(self) -> set:
        st = self.__dict__.get("_used")
        if st is None:
            st = set()
            for e in self.ev:
                if e.kind in ("op", "cut", "inplace", "module") and e.context in _FORWARD_CTX:
                    for r in e.inputs:
                        info = self.d.tensors.get(r.tid)
                        # (a leaf made in the step, `torch.ones(2, requires_grad=True)`, as one made before it)
                        if info is not None and info.is_leaf and info.requires_grad and (
                                info.producer is None or not self.ev[info.producer].inputs):
                            st.add(r.tid)
            self._used = st
        return st

    def _model_calls(self):
        """[(class of the called model, its parameters' tids, those used with grad enabled)] per
        top-level module call, in order."""
        calls = self.__dict__.get("_calls")
        if calls is None:
            calls = []
            params, grad = set(), set()
            tensors = self.d.tensors
            for e in self.ev:
                if e.kind == "module" and e.module is None:
                    if params:
                        calls.append((e.detail.cls or e.op, frozenset(params), frozenset(grad)))
                    params, grad = set(), set()
                elif e.module is not None and e.kind in ("op", "cut", "inplace") and e.context in _FORWARD_CTX:
                    for r in e.inputs:
                        info = tensors.get(r.tid)
                        if info is not None and info.role == "param":
                            params.add(r.tid)
                            if e.grad_enabled:
                                grad.add(r.tid)
            self._calls = calls
        return calls

    def untrained_twin(self, tid) -> bool:
        """``tid`` belongs to a model run only without grad that has the same class and parameter shapes
        as a model whose parameters received gradients: a target network, an EMA teacher, a reloaded
        best model (only meaningful when no optimizer says what trains)."""
        calls = self._model_calls()
        mine = [c for c in calls if tid in c[1]]
        if not mine or any(c[2] for c in mine):
            return False
        shape = self._call_shape
        for c in mine:
            sig = shape(c)
            for o in calls:
                if o[1] != c[1] and o[0] == c[0] and not (o[1] & c[1]) and shape(o) == sig and any(
                        self.grad_status(p) == "received" for p in o[2]):
                    return True
        return False

    def _call_shape(self, call):
        return sorted(tuple(self.d.tensors[t].shape) for t in call[1])

    def out_of_model(self, tid) -> bool:
        """A parameter no optimizer holds that the step only copied or built: the template layer
        nn.TransformerEncoder deep-copies, or a submodule replaced in __init__ (`self.decoder =
        nn.Linear(...)` over nn.Transformer's own decoder)."""
        t = self.d.tensors.get(tid)
        if t is None or t.role != "param" or tid in self.trainable:
            return False
        # a model's tensor: listed as one at the end of the recording (or, in traces saved before that list,
        # named); one the step never touched (named when it was asked about) is in its model too
        cons = self.consumers.get(tid, ())
        if self.d.meta.get("model_tensors") is not None:
            in_model = tid in self._model_tensors() or (not cons and t.name is not None)
        else:
            in_model = t.name is not None
        if in_model and tid not in (self.d.meta.get("left_model") or ()) and tid not in self._replaced_params():
            return False
        # (or FSDP's sharding of it: fully_shard replaced it by its sharded form, which the model holds)
        return all(_op(self.ev[i]) in _COPY_OPS or self.ev[i].context in ("init", "distributed") for i in cons)

    def _model_tensors(self) -> set:
        st = self.__dict__.get("_model_tensor_set")
        if st is None:
            st = self._model_tensor_set = set(self.d.meta.get("model_tensors") or ())
        return st

    def _replaced_params(self) -> set:
        """Parameters of submodules that were replaced (module_set events: `self.decoder = nn.Linear(...)`)."""
        st = self.__dict__.get("_replaced_set")
        if st is None:
            st = {t for e in self.ev if e.kind == "module_set" for t in (e.detail.old_params or ())}
            self._replaced_set = st
        return st

    # --- what it got ------------------------------------------------------------------------------
    def grad_status(self, tid) -> str:
        """"received" | "none" | "zero" | "nonfinite", by evidence (see the module docstring)."""
        cache = self.__dict__.setdefault("_status_cache", {})
        st = cache.get(tid)
        if st is None:
            n = getattr(self, "now", {}).get(tid)
            st = n["status"] if n else self.recorded_status(tid)
            if st in ("none", "zero") and self.cleared_after_use(tid) is not None:
                st = "received"
            cache[tid] = st
        return st

    def recorded_status(self, tid) -> str:
        """The status backward left, or what a clear made of it when a read found it cleared (a loaded
        trace has no live tensors to ask)."""
        info = self.d.tensors.get(tid)
        st = info.grad.status if info is not None and info.grad else "none"
        if st == "received":
            t = self.timing_problem(tid)
            if t is not None:
                st = "zero" if t[0].kind == "inplace" else "none"
        return st

    def requires_grad_now(self, tid) -> bool:
        """requires_grad as the step left it (as first seen, then the step's own writes; never a live read: a freeze
        after the trace is not what happened in the step)."""
        info = self.d.tensors.get(tid)
        rg = bool(info and info.requires_grad)
        for e in self.consumers_of(tid):
            if e.kind == "requires_grad" and e.detail.value is not None:
                rg = bool(e.detail.value)
        return rg

    def consumers_of(self, tid):
        return [self.ev[i] for i in self.consumers.get(tid, ())]

    def starved(self, tid) -> bool:
        """A tensor the step should train that requires grad and got no usable gradient (an all-zero one that is
        the exact cancellation of what its uses sent, beside others that got gradient, is the loss's own: not
        starved)."""
        if not (self.trains(tid) and self.requires_grad_now(tid)):
            return False
        st = self.grad_status(tid)
        return st in ("none", "nonfinite") or (st == "zero" and self.cancelled(tid) is None)

    def cancelled(self, tid):
        """``(backward record, [the norms its uses sent])`` when ``tid``'s all-zero gradient is the exact sum of
        two or more non-zero ones: in the last backward that reached it, several of its uses sent it gradient,
        their sum is zero, no hook of its own changed it, and other leaves got a non-zero gradient
        (a loss that is identically zero is not this). None otherwise."""
        cache = self.__dict__.setdefault("_cancelled_cache", {})
        if tid in cache:
            return cache[tid]
        cache[tid] = out = self._cancelled(tid)
        return out

    def _cancelled(self, tid):
        for b in reversed(self.d.backwards):
            g = b.leaf_grads.get(tid)
            if g is None:
                continue
            acc = {n.nid for n in b.nodes.values() if n.leaf == tid and n.ran}
            if not acc:
                continue  # (a backward that did not reach it: frozen then, or not in its graph)
            if g.status != "zero":
                return None
            sent = [p.out_norms[j] for p in b.nodes.values() if p.ran
                    for j, nx in enumerate(p.next) if nx in acc and j < len(p.out_norms)]
            if sum(1 for v in sent if v is not None and v > 0) < 2 or any(v == -1.0 for v in sent if v is not None):
                return None
            if any(e.kind == "hook" and tid in e.input_ids() for e in self.ev):
                return None
            if not any(k != tid and x.status == "received" for k, x in b.leaf_grads.items()):
                return None
            return b, [v for v in sent if v]
        return None

    # --- timing of clears, by evidence ------------------------------------------------------------
    def _grad_clears(self, tid):
        """(the backward event that last filled ``tid``'s .grad, the events that cleared it since:
        `.grad = None` / zero_grad(), or zeros written into it), or (None, [])."""
        got = [b for b in self.d.backwards if b.api != "torch.autograd.grad" and tid in b.leaf_grads
               and b.leaf_grads[tid].status != "none"]
        if not got:
            return None, []
        last = got[-1].event
        out = []
        for e in self.ev[last + 1:]:
            if e.kind == "grad_set" and tid in e.input_ids():
                if e.detail.value is not None:
                    break  # a gradient assigned by hand: what follows reads that
                out.append(e)
            elif e.kind == "inplace" and _op(e) in _ZEROING or (
                    e.kind == "inplace" and e.site is not None and "zero_grad" in (e.site.code or "")):
                grads_of = e.detail.grads_of or [e.detail.grad_of]
                if tid in grads_of:
                    out.append(e)
        return self.ev[last], out

    def bad_read(self, tid, clear: Event):
        """The first read of ``tid``'s .grad after ``clear`` that found None (or the zeros it wrote):
        a grad_read event, an optimizer.step() that holds it, or a user/clipping op on its .grad tensor."""
        zeroing = clear.kind == "inplace"
        for e in self.ev[clear.index + 1:]:
            k = e.kind
            if k == "grad_read" and tid in e.input_ids():
                return e
            if k == "optimizer_step":
                if tid in (e.detail.found_none or ()):
                    return e
                if zeroing and tid in (e.detail.params or ()):
                    return e
            elif k == "grad_set" and e.detail.value is not None and tid in e.input_ids():
                return None
            elif k == "backward" and tid in (self._leaf_grads_of(e) or ()):
                return None  # filled again
        return None

    def _leaf_grads_of(self, e: Event):
        for b in self.d.backwards:
            if b.event == e.index:
                return b.leaf_grads
        return None

    def timing_problem(self, tid):
        """(clear event, the read that found it cleared), or None."""
        fill, clears = self._grad_clears(tid)
        for c in clears:
            r = self.bad_read(tid, c)
            if r is not None:
                return c, r
        return None

    def cleared_after_use(self, tid):
        """(fill event, first clear, the consumers that read .grad before it) when backward filled
        ``tid``'s .grad and it was cleared afterwards with no read finding it cleared; else None."""
        fill, clears = self._grad_clears(tid)
        if not clears:
            return None
        first = clears[0]
        # the next step's backward (same line) ran after the clear but did not fill it again: that
        # backward's own problem, not a clear
        if any(e.kind == "backward" and e.index > first.index and e.op != "torch.autograd.grad"
               and e.site is not None and fill.site is not None and e.site.stack == fill.site.stack
               for e in self.ev[first.index + 1:]):
            return None
        if any(self.bad_read(tid, c) is not None for c in clears):
            return None
        if any(e.kind == "backward" and e.op == "torch.autograd.grad" and tid in (e.detail.inputs or ())
               for e in self.ev[first.index + 1:]):
            return None  # cleared, then its next gradient was computed with autograd.grad
        readers = [e for e in self.ev[fill.index + 1:first.index]
                   if (e.kind == "optimizer_step" and tid in (e.detail.params or ()))
                   or (e.context == "clip" and e.kind in ("op", "inplace", "cut"))]
        return fill, first, readers
