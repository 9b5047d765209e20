"""The sync into plain data: the final Events (sites, tensor refs, enum members, typed details) and names, built
on the first query.

``Sync`` owns how far the conversion got: ``convert`` builds each recorded ``RawEvent``'s
:class:`~gradscope.core.model.Event` once; a record a component changed after its conversion (``Sink.changed``)
has its Event built again, in its place; once the recording stopped and everything is converted, the raw records
go. The facts that need the live modules are taken at stop by ``_module_facts.ModuleFacts``.
"""
from __future__ import annotations

from ..core.events import DETAIL_TYPES, Context, EventKind, detail_of
from ..core.model import Cause, Event, ExceptionInfo, TensorRef
from ..core.naming import infer_names
from . import _frames
from ._containers import resolved
from ._records import error_key
from ._refs import _Ref


_new = object.__new__
_KINDS = {str(k): k for k in EventKind}
_CONTEXTS = {str(c): c for c in Context}
_CUTS = {str(c): c for c in Cause}


class Sync:
    """Turns what the components recorded into plain data (``sync``), on the first query."""

    def __init__(self, sink, engine, backward, saved, lineage, facts):
        self._sink = sink
        self._data, self._events, self._tensors = sink.data, sink.events, sink.tensors
        # the recorder: whether it records, its identity maps and the live maps of its modules and calls
        self._engine = engine
        self._backward, self._saved, self._lineage, self._facts = backward, saved, lineage, facts
        self.synced = 0  # events converted so far
        self._synced_tensors = -1  # tensors seen at the last conversion (-1: convert again)
        self._metas: dict = {}  # interned (shape, dtype, device) tuples
        # whether the block raised (never the exception itself: its traceback holds every frame of the failing
        # call and their locals, the user's tensors and models)
        self.raised = False
        # inside one query of the facade (Recorder.pause: no user code runs) which tensors are alive is read once
        self.queries = 0
        self._alive_read = False

    def stopped(self):
        """The recording stopped: the per-event conversion is left to the first query."""
        self._synced_tensors = -1

    def sync(self):
        """Turn raw records into plain data (sites, tensor refs, names). True when anything changed.

        While recording, everything is brought up to date. After :meth:`stop` (which already took
        what needs live objects: names, owners, module facts), the per-event conversion happens
        here, on the first query: a trace nobody looks at never pays for it. Each record becomes its
        final :class:`~gradscope.core.model.Event` once (a record a component changed after that, listed in
        ``Sink.changed``, is built again: the stored Event is replaced, never edited)."""
        eng = self._engine
        raws = self._events
        changed = self._sink.changed
        if (self.synced == len(raws) and self._synced_tensors == eng.identity.next_tid and not eng.calls.on
                and not self._backward.pending and not changed):
            if not self._alive_read:
                self._refresh_alive()
            return False
        self._synced_tensors = eng.identity.next_tid
        n = len(raws)
        if changed:  # (records not converted yet are converted as they are now)
            changed[:] = [i for i in changed if i < self.synced]
        if self.synced < n:
            self._data.events.extend(self.convert(raws, range(self.synced, n)))
        self.synced = n
        if self._backward.pending:
            self._backward.build()
        if eng.calls.on:
            self._facts.sync_live()
        if changed:  # (sync_live may add to it: late module paths)
            self._rebuild(changed)
        self._refresh_alive()
        infer_names(self._data)
        if eng._stopped and not self._backward.pending:
            self._drop_recording_state()
        return True

    def convert(self, raws, indices) -> list:
        """The final Events of the raw records at ``indices``: a ``Site`` for the raw site, ``TensorRef``s for the
        packed refs (the same tensor in the same state: one object), the kind, context and cut as enum members,
        the detail typed by kind (records that share one detail dict share its typed detail)."""
        tens = self._tensors
        make_site = _frames.make_site
        refs_seen: dict = {}  # packed ref -> its TensorRef (the same tensor in the same state: one object)
        details: dict = {}  # id(dict) -> its Detail (the dicts are alive: their records hold them)
        tref_of = self.tref
        kinds, contexts, cuts = _KINDS, _CONTEXTS, _CUTS
        out = []
        for i in indices:
            r = raws[i]
            site = r.site
            if type(site) is tuple:
                site = make_site(site) if site else None
            ins = r.inputs
            if ins:
                ins = tuple([refs_seen.get(x) or refs_seen.setdefault(x, tref_of(x, tens)) for x in ins])
            outs = r.outputs
            if outs:
                outs = tuple([refs_seen.get(x) or refs_seen.setdefault(x, tref_of(x, tens)) for x in outs])
            else:
                outs = ()
            kind = kinds.get(r.kind, r.kind)
            d = r.detail
            key = id(d)
            det = details.get(key)
            if det is None:
                det = details[key] = detail_of(kind, d)
            elif det.__class__ is not DETAIL_TYPES.get(kind, det.__class__):  # (one dict, two kinds: its own)
                det = detail_of(kind, d)
            cut = r.cut
            out.append(Event(r.index, kind, r.op, site, ins if ins else (), outs, r.grad_enabled, r.inference_mode,
                             r.module, contexts.get(r.context, r.context), cuts.get(cut, cut) if cut else None, det))
        return out

    def _rebuild(self, changed):
        """Records changed after their conversion: their Events built again (in place in the list)."""
        evs, raws = self._data.events, self._events
        todo = sorted({i for i in changed if i < self.synced and raws[i] is not None})
        changed.clear()
        for i, e in zip(todo, self.convert(raws, todo)):
            e.verdict = evs[i].verdict
            evs[i] = e

    def _drop_recording_state(self):
        """After the recording and its conversion into plain data: what only recording needed (consumers of
        each tensor for the in-place checks, recent results, graph-node -> event links, escaped values,
        interned call stacks) is let go, so that a kept trace holds only its data."""
        eng = self._engine
        raws = self._events
        for i in range(len(raws)):  # the raw records: all converted (their indices stay: len() numbers events)
            raws[i] = None
        self._saved.forget()
        self._lineage.forget()
        eng.modules.raws.clear()
        self._backward.forget()
        eng.calls.forget()
        # the live maps of the model's modules (names, owners and module facts were taken at stop; a parameter
        # no call used is still named from _param_src when it is asked about)
        eng.modules.forget()
        # references to tensors that are gone (a step's activations, once backward freed them) find nothing
        # any more: their entries go (their TensorInfo stays, marked not alive)
        refs, ids = eng.identity.refs, eng.identity.ids
        for tid in [t for t, r in refs.items() if type(r) is _Ref and r() is None]:
            del refs[tid]
        for k in [k for k, r in ids.items() if type(r) is _Ref and r() is None]:
            del ids[k]

    def end_query(self):
        """A query of the facade ended: the next one reads again which tensors are alive."""
        self._alive_read = False

    def _refresh_alive(self):
        self._alive_read = self.queries > 0  # (read once per query: see queries)
        tens = self._tensors
        for tid, r in self._engine.identity.refs.items():
            info = tens.get(tid)
            if info is not None:
                info.alive = r() is not None
        for tid in self._engine.identity.lazy:  # a LazyModule's parameters, first seen without a shape: theirs once materialized
            t = self.live(tid)
            if t is not None and tid in tens:
                try:
                    tens[tid].shape = tuple(t.shape)
                except RuntimeError:  # (still uninitialized)
                    pass

    def tref(self, r, tens):
        """The TensorRef of a packed ref (built without the keyword call of ``TensorRef(...)``: this runs once
        per distinct ref at the first query)."""
        if type(r) is not int:
            return r
        tid = (r >> 2) & 0xFFFFFFFF  # _tid_of
        info = tens.get(tid)
        key = (info.shape, info.dtype, info.device) if info is not None else ((), "?", "?")
        x = _new(TensorRef)
        x.tid = tid
        x.meta = self._metas.setdefault(key, key)  # identical (shape, dtype, device) share one tuple
        x.requires_grad = bool(r & 2)
        x.is_leaf = bool(r & 1)
        x.version = (r >> 34) - 1  # _ver
        return x

    def live(self, tid):
        r = self._engine.identity.refs.get(tid)
        return r() if r is not None else None

    def record_caught(self):
        """The block raised nothing, but its last backward call did and the user's code caught it (`try:
        loss.backward() except RuntimeError: ...`): that backward's error is the trace's failure, as if it had left
        the block (``meta["exception_caught"]``). Not when a later backward ran: the step went on."""
        idx = self._sink.error_event
        if idx is None or self.raised or self._data.exception is not None or idx >= len(self._events):
            return
        raw = self._events[idx]
        if raw is None or raw.kind != "backward" or any(
                r is not None and r.kind == "backward" for r in self._events[idx + 1:]):
            return
        typ, msg = self._sink.error_key
        self._data.exception = ExceptionInfo(typ, msg, idx, _frames.make_site(raw.site))
        self._data.meta["exception_caught"] = True

    def record_exception(self, exc):
        self.raised = True
        site = None
        tb = exc.__traceback__
        raw = []
        while tb is not None:
            co = tb.tb_frame.f_code
            if _frames.category(co) == _frames.USER:
                raw.append((id(co), tb.tb_lineno))
                self._engine.modules.scan_frame(tb.tb_frame)  # (its models' plain containers, while alive)
            tb = tb.tb_next
        if raw:
            site = _frames.make_site(tuple(reversed(raw)))
        if self._engine.modules.containers:  # (stop took them already: those the error's frames added as well)
            self._data.meta["plain_containers"] = resolved(self._engine.modules.containers, self._engine.tid_of)
        # the event that raised it: the last call that raised, if this is that error (or wraps it), not one
        # the program caught before
        event, c = None, exc
        for _ in range(8):
            if c is None:
                break
            if self._sink.error_key is not None and error_key(c) == self._sink.error_key:
                event = self._sink.error_event
                break
            c = c.__cause__ or c.__context__
        self._data.exception = ExceptionInfo(type(exc).__name__, str(exc)[:4000], event, site)
