"""Tensor identity and references: trace-local ids, packed refs (``_pk``), and the reference kinds
that never keep a user's tensor alive (``_Ref``, ``_Held``, ``_Slot``, ``_GradRef``).

``Identity`` owns the id maps (``ids``: id(tensor) -> reference, ``refs``: tid -> reference) and each
tensor's ``TensorInfo`` as it is first seen; it asks the modules for a module tensor's path and the
lineage for where a tensor without a producer came from.
"""
from __future__ import annotations

import sys
import weakref


from ..core.model import TensorInfo
from . import _frames, _names
from ._compat import (
    disable_torch_function as _NO_TF, fsdp2_loaded, fsdp2_modules, fsdp2_unsharded, is_view as _is_view, module_buffers,
    module_parameters,
)
from ._ops import _T, _P, _DTYPES, _is_leaf, context_of
from ._records import RawEvent


# A raw tensor ref is one int (ints are not tracked by the garbage collector; tuples of them get
# untracked): bit 0 is_leaf, bit 1 requires_grad, bits 2-33 tid, the rest version + 1.
def _pk(tid, rg, leaf, ver=0):
    return ((ver + 1) << 34) | (tid << 2) | (2 if rg else 0) | (1 if leaf else 0)


def _tid_of(x):
    return (x >> 2) & 0xFFFFFFFF


def _ver(x):
    return (x >> 34) - 1


class _Ref(weakref.ref):
    """A weak reference that also carries the tensor's trace-local id (one object, not two)."""

    __slots__ = ("tid",)


class _Held:
    """A strong reference in the shape of a _Ref (called, it returns the object), for parameters and
    buffers while recording: a weak reference makes torch.utils.swap_tensors refuse a tensor
    (load_state_dict, module.to() under torch.__future__.set_swap_module_params_on_conversion(True)).
    Modules hold these anyway; released when the recording stops (Identity.release_params)."""

    __slots__ = ("t", "tid")

    def __init__(self, t):
        self.t = t

    def __call__(self):
        return self.t


class _Slot:
    """After the recording: a module's parameter, buffer or parameter .grad found through its module
    (weakly referenced) and name, with no reference of any kind on the tensor itself."""

    __slots__ = ("grad", "key", "kind", "m", "name", "tid", "mark")

    def __init__(self, m_ref, kind, name, grad, key, mark=None):
        self.m, self.kind, self.name, self.grad, self.key = m_ref, kind, name, grad, key
        self.mark = mark  # (data_ptr, shape) when the recording stopped: see matches()

    def matches(self, t) -> bool:
        """Whether ``t`` is this tensor, also once its module is gone (a function returned only the
        parameter): the same id, memory and shape as when the recording stopped (no reference needed)."""
        if id(t) != self.key or self.mark is None:
            return False
        try:
            return (t.data_ptr(), tuple(t.shape)) == self.mark
        except (RuntimeError, ValueError):  # (no storage, or no shape: a nested tensor)
            return False

    def __call__(self):
        m = self.m()
        if m is None:
            return None
        t = (module_parameters(m) if self.kind == "p" else module_buffers(m)).get(self.name)
        if t is not None and self.grad:
            t = t.grad
        return t if t is not None and id(t) == self.key else None


class _GradRef:
    """A leaf's .grad, found through its leaf (no reference on the gradient itself: torch.utils.swap_tensors
    swaps parameters' gradients too, and holding them would keep them past zero_grad)."""

    __slots__ = ("gone", "key", "leaf", "refs", "tid")

    def __init__(self, refs, leaf, key):
        self.refs, self.leaf, self.key, self.gone = refs, leaf, key, False

    def __call__(self):
        r = self.refs.get(self.leaf)
        t = r() if r is not None and not self.gone else None
        if t is None:
            return None
        with _NO_TF():
            g = t.grad
        return g if g is not None and id(g) == self.key else None


class _DeadRef:
    __slots__ = ("tid",)

    def __call__(self):
        return None


class Identity:
    """Trace-local tensor ids (``tid``, ``tid_of``, ``pack``) and the references behind them."""

    def __init__(self, sink, engine):
        self._events, self._tensors = sink.events, sink.tensors
        # the recorder: its entry frame, optimizer flag and modules (a module tensor's path, its owner)
        self._engine = engine
        self.ids: dict = {}  # id(tensor) -> _Ref (a weak reference carrying the tid)
        self.refs: dict = {}  # tid -> weakref
        self._shapes: dict = {}  # interned shape tuples
        self.lazy: set = set()  # tids of LazyModule parameters seen before their first forward (no shape yet)
        self.next_tid = 0
        self.param_tids: set = set()  # tids whose role is "param" (a trace's tensors are mostly not)
        self.slots = None  # after the recording: id -> where a module's tensor is (see release_params)
        self.grad_of: dict = {}  # id(.grad tensor) -> leaf tid (filled by Backward after each backward)
        self.grad_tids: list = []  # the tids whose reference is a _GradRef, in order
        self._fsdp: dict = {}  # id(FSDP2's unsharded parameter) -> its sharded parameter (see _sharded_of)
        self._fsdp_seen: tuple = (0, [])  # (how many modules were looked at, the FSDP2 modules among them)
        self._lineage = self._recent = self._arrays = self._values = None  # (see bind_lineage)
        # leaves first seen inside Optimizer.zero_grad(): their naming waits for the next module call or the stop,
        # when the model that holds them has usually named them by module path (see resolve_deferred)
        self.deferred: list = []  # (tid, id(frame), code, frames for outer_var (0: done), whether attr_name searches)
        self._zg_at = None  # (the zero_grad() call's list, id of its user frame, that frame's code)

    def bind_lineage(self, lineage):
        """The lineage (made after the identity: it reads its refs) that tensors without a producer are matched in."""
        self._lineage = lineage
        self._recent, self._arrays, self._values = lineage.recent, lineage.arrays, lineage.values

    # --- tensor identity -------------------------------------------------------------------
    def note_requires_grad(self, t, value, raw, flags, step):
        """A ``requires_grad`` write that ran before this trace started, seen by gradscope.watch (at
        its step ``step``, from the user frames ``raw``): recorded as the mode would have recorded it."""
        with _NO_TF():  # (no mode sees gradscope's own reads)
            # a plain tensor is named after the user's variable as at a first use; a parameter by its model
            ref = _pk(self.tid(t, link=not isinstance(t, _P)), t.requires_grad, True, t._version)
        idx = len(self._events)
        self._events.append(RawEvent(idx, "requires_grad", "torch.Tensor.requires_grad_", raw, [ref], (), True, False,
                                  None, context_of(flags, True), None, {"value": bool(value), "watch_step": step}))

    def tid(self, t, producer=None, link=True):
        r = self.ids.get(id(t))
        if r is not None and r() is t:
            return r.tid
        tp = type(t)
        is_param = tp is _P or (tp is not _T and isinstance(t, _P))
        if is_param and producer is None and fsdp2_loaded():
            sharded = self._sharded_of(t)
            if sharded is not None:  # FSDP2's unsharded form of a parameter: the parameter (its sharded form)
                tid = self.tid(sharded, link=link)
                r = _Ref(t)
                r.tid = tid
                self.ids[id(t)] = r
                return tid
        tid = self.next_tid
        self.next_tid = tid + 1
        if is_param or (producer is None and id(t) in self._engine.modules.param_names):  # (see _Held)
            r = _Held(t) if self.slots is None else self.unpinned(t)
        elif producer is None and self.grad_of and self.grad_leaf(t) is not None:
            r = _GradRef(self.refs, self.grad_of[id(t)], id(t))
            self.grad_tids.append(tid)
        else:
            try:
                r = _Ref(t)
            except TypeError:
                r = _DeadRef()
        try:
            shape = tuple(t.shape)
            shape = self._shapes.setdefault(shape, shape)  # long-lived objects cost every full GC: share them
        except RuntimeError:  # (a nested tensor has no single shape; a LazyModule's parameter has none yet)
            shape = ()
        try:
            base = t._base if _is_view(t) else None  # (direct: see _compat.DIRECT_TENSOR_ATTRS)
        except ValueError:  # an UninitializedParameter (a LazyModule before its first forward): no data to view
            base = None
            self.lazy.add(tid)  # (its shape is read again at sync)
        dt = _DTYPES.get(t.dtype)
        if dt is None:
            dt = _DTYPES[t.dtype] = str(t.dtype).replace("torch.", "")
        info = TensorInfo(
            tid, shape, dt, "cpu" if t.is_cpu else str(t.device), t.requires_grad, _is_leaf(t),
            producer=producer, role="param" if is_param else "tensor",
            base=self.tid(base, link=False) if base is not None else None,
        )
        self._tensors[tid] = info
        if is_param:
            self.param_tids.add(tid)
        r.tid = tid  # (registered once its info exists: a query never finds a tid without one)
        self.ids[id(t)] = r
        self.refs[tid] = r
        if producer is not None:  # a call's result: nothing to name or link
            return tid
        eng = self._engine
        mods = eng.modules
        named = False
        src = mods.param_src.get(id(t))
        if src is not None and src.ref() is t:  # a tensor of a called model: its module path
            mods.model_tensor(tid, src.root, src.path)
            info.name = mods.prefix.get(src.root, "") + src.path
            if not is_param:
                info.role = "buffer"
            named = True
        if eng.calls.in_opt:  # optimizer temporaries (exp_avg, denom): nothing to name or link
            return tid
        entry = eng.entry
        if link and not named and entry is not None:
            trainable = info.requires_grad and info.is_leaf
            zg = eng.calls.zg
            if zg is not None and is_param:
                # inside Optimizer.zero_grad(): its parameters are named when the model that holds them is
                # called (resolve_deferred); the user frame of the call is looked up once per zero_grad()
                at = self._zg_at
                if at is None or at[0] is not zg:
                    f = _frames.first_user_frame(sys._getframe(), entry)
                    at = self._zg_at = (zg, id(f), f.f_code) if f is not None else (zg, None, None)
                if at[1] is not None:
                    self.deferred.append((tid, at[1], at[2], 4 if trainable else 1, id(t) not in mods.param_owner))
            else:
                f = _frames.first_user_frame(sys._getframe(), entry)
                # a trainable leaf first used deep inside (a Dataset's __getitem__ reading self.prompt): the
                # caller's variable for it, a few frames up
                info.name = _frames.outer_var(f, entry, t, frames=4 if trainable else 1, public=True)
                # passed by attribute (`helper(x, m.scale)`): m.scale, cfg.temperature (not a parameter being
                # built in the trace: its model names it when called)
                if (trainable or is_param) and id(t) not in mods.param_owner and f is not None:
                    if zg is not None:  # (inside Optimizer.zero_grad(): see resolve_deferred)
                        self.deferred.append((tid, id(f), f.f_code, 0, True))
                    else:
                        self._attr_name(info, t, f, entry, None)
        if not is_param and link:
            if self._recent and info.is_leaf and self._lineage.link_alias(t, info):
                pass
            elif (self._arrays or self._values) and not t.requires_grad:
                self._lineage.link_external(t, info)
        return tid

    def _sharded_of(self, t):
        """The sharded parameter (what the module holds between forwards, what the optimizer steps) whose
        unsharded form FSDP2 swapped in is ``t``, else None."""
        m = self._fsdp.get(id(t))
        if m is None:  # (first seen, or an FSDP2 module that had not all-gathered yet: look again)
            paths = self._engine.modules.mod_path
            if len(paths) != self._fsdp_seen[0]:  # (the FSDP2 modules among those the trace knows, when they change)
                self._fsdp_seen = (len(paths), fsdp2_modules([mod for mod, _ in paths.items()]))
            if not self._fsdp_seen[1]:
                return None
            self._fsdp = fsdp2_unsharded(self._fsdp_seen[1])
            m = self._fsdp.get(id(t))
        return m

    def _attr_name(self, info, t, f, entry, memo):
        """Name leaf ``t`` by an object of user frame ``f``'s that holds it (``m.scale``), when no variable
        named it or only an argument of ``f`` did (then from ``f``'s callers)."""
        if info.name is None:
            info.name = _names.attr_name(f, entry, t, memo=memo)
        elif _names.is_argument(f, info.name):
            info.name = _names.attr_name(self._engine.modules.callers(f), entry, t, frames=3, memo=memo) or info.name

    def resolve_deferred(self):
        """The deferred searches of leaves first seen in ``zero_grad()`` (called at the next module call and at
        stop): a leaf a called model named by module path needs none; the others search from their frame if it
        is still running (the usual case: the step's function), else from the innermost user frame now. One
        memo for all: the search reads each object once (attr_name)."""
        todo, self.deferred, self._zg_at = self.deferred, [], None
        eng = self._engine
        entry = eng.entry
        named = eng.modules.model_tids()
        memo: dict = {}
        frames = None
        for tid, fid, code, outer, search in todo:
            info = self._tensors.get(tid)
            r = self.refs.get(tid)
            t = r() if r is not None else None
            if t is None or info is None or tid in named:
                continue
            if frames is None:
                frames = {}
                fr = sys._getframe(1)
                while fr is not None:
                    frames[id(fr)] = fr
                    fr = fr.f_back
            f = frames.get(fid)
            if f is None or f.f_code is not code:  # (returned: from where the program is now)
                f = _frames.first_user_frame(sys._getframe(1), entry)
                if f is None:
                    continue
            if outer:
                info.name = _frames.outer_var(f, entry, t, frames=outer, public=True)
            if search:
                self._attr_name(info, t, f, entry, memo)

    def grad_leaf(self, t):
        """The tid of the leaf whose .grad tensor ``t`` is (recorded after each backward), else None."""
        tid = self.grad_of.get(id(t))
        if tid is not None:  # (no reference on the .grad tensor itself: it is checked through its leaf)
            leaf = self.refs[tid]()
            if leaf is not None and leaf.grad is t:
                return tid
        return None

    def grad_leaf_alive(self, key, tid):
        leaf = self.refs[tid]()
        g = leaf.grad if leaf is not None else None
        return g is not None and id(g) == key

    def tid_of(self, t):
        r = self.ids.get(id(t))
        if r is not None and (r() is t or type(r) is _Slot and r.matches(t)):
            return r.tid
        return None

    def pack(self, ts) -> list:
        """The packed refs (see _pk) of tensors ``ts`` in their current state. Every recorded call
        runs this for its inputs, so _pk and the fast path of tid are written out here."""
        ids = self.ids
        out = []
        for t in ts:
            r = ids.get(id(t))
            tid = r.tid if r is not None and r() is t else self.tid(t)
            try:
                v = t._version  # (direct: see _compat.DIRECT_TENSOR_ATTRS)
            except RuntimeError:  # inference tensors have no version counter
                v = -1
            try:
                leaf = t.is_leaf
            except RuntimeError:  # a view made under no_grad whose base was then written in place
                leaf = True
            out.append(((v + 1) << 34) | (tid << 2) | (2 if t.requires_grad else 0) | (1 if leaf else 0))
        return out

    def ref(self, t):
        """The packed ref (see _pk) of ``t`` in its current state."""
        return self.pack((t,))[0]

    def release_params(self):
        """The recording is over: no reference of ours, strong or weak, stays on a module's parameters,
        buffers or parameter .grad (see _Held); they are found again through their module (_Slot).
        Other tensors keep their weak references."""
        self._fsdp, self._fsdp_seen = {}, (0, [])  # (its sharded parameters and modules: no reference stays)
        slots = {}
        for m, _path in self._engine.modules.mod_path.items():
            m_ref = weakref.ref(m)
            for kind, d in (("p", module_parameters(m)), ("b", module_buffers(m))):
                for name, t in (d or {}).items():
                    if isinstance(t, _T):
                        slots.setdefault(id(t), (m_ref, kind, name, False))
                        if kind == "p" and t.grad is not None:
                            slots.setdefault(id(t.grad), (m_ref, kind, name, True))
        self.slots = slots
        ids, refs = self.ids, self.refs
        made: dict = {}  # id(tensor) -> its one new reference (shared by the maps below)

        def unpinned(t):
            new = made.get(id(t))
            if new is None:
                new = made[id(t)] = self.unpinned(t)
            return new

        for tid, r in list(refs.items()):
            t = r()
            if t is not None and (type(r) is _Held or id(t) in slots):
                new = unpinned(t)
                new.tid = tid
                refs[tid] = new
                if ids.get(id(t)) is r:
                    ids[id(t)] = new
        # (names stay: a parameter no call used is named from them when it is asked about)
        self._engine.modules.unpin_tensors(unpinned)

    def drop_held(self):
        """release_params failed: forget every strong reference (those tensors are no longer found)."""
        for tid, r in list(self.refs.items()):
            if type(r) is _Held:
                dead = _DeadRef()
                dead.tid = tid
                self.refs[tid] = dead
                t = r.t
                if self.ids.get(id(t)) is r:
                    self.ids[id(t)] = dead
        self.slots = self.slots or {}
        self._engine.modules.drop_tensors()

    def unpinned(self, t):
        """A reference to ``t`` after the recording: through its module if it is a module's parameter,
        buffer or parameter .grad, else weak."""
        s = self.slots.get(id(t))
        if s is not None:
            try:
                mark = (t.data_ptr(), tuple(t.shape))
            except (RuntimeError, ValueError):  # (no storage, or no shape; ValueError: an uninitialized lazy one)
                mark = None
            return _Slot(*s, id(t), mark)
        try:
            return _Ref(t)
        except TypeError:
            return _DeadRef()
