"""Call recording: the event each torch call the mode hands over becomes (``_record``, ``_other_call``).

``Calls`` owns the switches the hot path reads (``on``, ``in_opt``), the zero_grad() bracket (``zg``),
the leaves whose .grad was cleared (``cleared``) and the hooks seen registered; it binds, at
construction, what each call needs of the other components (ids, the frame walk, in-place probes,
lineage), so that a recorded op pays no extra attribute hop for them.
"""
from __future__ import annotations

import sys

import torch

from . import _frames
from ._compat import (
    fsdp2_original, jit_tracing_state as _jit_tracing, next_sequence_nr as _seq, RECORD_FUNCTION_ENTER as _RF_ENTER,
    RECORD_FUNCTION_EXIT as _RF_EXIT, node_sequence_nr,
)
from ._frames import (
    F_CLIP, F_COMPILE, F_DIST, F_INIT, F_TORCH,
)
from ._ops import (
    _T, _DETACH, _CONVERT, _FILLS, _BACKWARD, _ZERO_GRAD_OPS, _CAST_NAMES, _SHAPE_ONLY, _SHAPE_OF_OTHER,
    _POST_ACC_HOOK, _DATA_SET, _SPECIAL, _NAMES, _name, _short, _C_OP, _C_INPLACE, _C_IGNORE,
    _C_GRAD_SET, _C_SET_GRAD, _C_BACKWARD, _C_GRAD_GET, _C_PASS, _ZERO_GRAD_DETAIL, _CTX_FLAGS,
    _NO_DETAIL, _is_leaf, _tensors, context_of,
)
from ._records import RawEvent, error_key
from ._refs import _pk, _tid_of, _Ref, _Held, _GradRef
from ._trampoline import _caller
from ._values import nonfinite_scalar

_LEAF_GET = torch.Tensor.is_leaf.__get__


class Calls:
    """Records each torch call the mode hands over (``_record``, ``_other_call``) as an event."""

    def __init__(self, sink, engine, identity, modules, saved, lineage, backward, *, max_events, eager_compile):
        self._sink = sink
        self.data, self.events, self.tensors = sink.data, sink.events, sink.tensors
        self._internal, self._guard, self._note = sink.internal, sink.guard, sink.note
        self._engine = engine  # the recorder: the limit reached (steps=/max_events=), the sync's progress
        self._ident, self._saved = identity, saved
        # bound once (the hot path reads them as its own attributes)
        self._ids, self._refs, self._grad_of = identity.ids, identity.refs, identity.grad_of
        self._tid, self.tid_of, self._pack, self._ref = identity.tid, identity.tid_of, identity.pack, identity.ref
        self._grad_leaf = identity.grad_leaf
        self._where, self._mod_stack, self._module = modules.where, modules.mod_stack, modules.current_module
        self._saved_info, self._node_ev, self._consumers, self._open = saved.info, saved.node_ev, saved.consumers, saved.open
        self._recent, self._values, self._arrays = lineage.recent, lineage.values, lineage.arrays
        self._escape, self._reentry = lineage.escape, lineage.reentry
        self._backward = backward.run
        self._max_events = max_events
        self._eager_compile = eager_compile
        self.on = False  # recording (the facade's pause and the limits switch it off)
        self.in_opt = False  # inside optimizer.step(): its calls pass through (see Optim)
        self.zg = None  # inside Optimizer.zero_grad(): [] or [its grad_set event]
        # leaves whose .grad was set to None (zero_grad(), `.grad = None`) since a backward last filled
        # it: tid -> that grad_set event. A read that finds None then is recorded (_grad_read).
        self.cleared: dict = {}
        self._watch = False  # bool(self.cleared), read on the hot path
        self.hooked: set = set()  # id() of tensors whose hook registration was recorded
        self.prehooked: set = set()  # sequence numbers of nodes whose output a tensor hook rewrites
        self._s0 = 0  # the autograd sequence number before the recorded call
        self._seen_compiled = False
        self._seen_jit = False

    def grad_refilled(self, tid) -> None:
        """A backward filled the .grad of leaf ``tid`` again (cleared since: see _grad_read)."""
        cleared = self.cleared
        cleared.pop(tid, None)  # filled again
        if not cleared:
            self._watch = False

    # --- the mode's calls (``_recorder.Mode.__torch_function__`` classifies each and calls one of these) ---
    def _record(self, code, func, args, kwargs):
        """Call ``func`` and record it as an event (its inputs before, its outputs after)."""
        if _jit_tracing() is not None:
            return self._jit_traced(func, args, kwargs)
        try:
            pre = self._pre(func, args, kwargs, code)
        except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
            self._internal(e)
            return func(*args, **kwargs)
        self._s0 = _seq()
        try:
            out = pre[9](func, args, kwargs)  # (called "from the user's line": see _caller)
        except BaseException as e:
            self._guard(self._post_error, pre, e, func)
            raise
        try:
            self._post(pre, func, args, kwargs, out)
        except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
            self._internal(e)
            self._guard(self._post_minimal, pre, func, e)
        return out

    def _jit_traced(self, func, args, kwargs):
        """Inside torch.jit.trace: not recorded. The JIT tracer names graph values after the locals of
        the frames above each op, and a recording frame holding the result would change those names
        (its check_trace then fails: "Graphs differed across invocations")."""
        if not self._seen_jit:
            self._seen_jit = True
            self._note("ops run under torch.jit.trace were not recorded (the JIT tracer reads the frames above each "
                       "op to name its values)")
        return func(*args, **kwargs)

    def _post_minimal(self, pre, func, err):
        """_post failed (an odd tensor, or a gradscope bug): still record that the call happened, with
        its inputs and, for a write, its target, so the rules that need the event still see it."""
        refs, ins, raw, flags, grad_on, kind, target, before, saved, _ = pre
        detail = {"internal_error": f"{type(err).__name__}: {err}"[:300]}
        if kind == "inplace" and target is not None:
            detail["target"] = self._tid(target)
            detail["version_before"] = before
            try:
                detail["version_after"] = target._version
            except RuntimeError:
                detail["version_after"] = -1
            if saved is not None:
                detail["saved"] = True
                detail["saved_by"] = saved
        idx = len(self.events)
        self.events.append(RawEvent(idx, kind, _name(func), raw, refs, (), grad_on, torch.is_inference_mode_enabled(),
                                 self._module(), self._context(flags, grad_on), None, detail))

    def _other_call(self, code, func, args, kwargs):
        if code == _C_PASS:
            return _caller(sys._getframe(2))(func, args, kwargs)  # (from the caller's line: see _WARNS)
        if code == _C_GRAD_GET:
            # only a non-leaf's .grad read warns (from C++): that one runs from the line that read it (see
            # _caller), a leaf's (every parameter's) stays one C call
            try:
                leaf = len(args) == 1 and not kwargs and _LEAF_GET(args[0])
            except RuntimeError:  # (a stale no-grad view: see _is_leaf)
                leaf = False
            out = func(*args) if leaf else _caller(sys._getframe(2))(func, args, kwargs)
            if not self._watch:
                return out
            if out is None and self.cleared:
                try:
                    self._grad_read(args[0])
                except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
                    self._internal(e)
            return out
        if code == _C_IGNORE:
            # profiler markers; the one around Optimizer.zero_grad() opens a bracket in which the
            # per-parameter `p.grad = None` calls become one event
            if func is _RF_ENTER:
                self.zg = [] if args and str(args[0]).startswith("Optimizer.zero_grad#") else None
                if self.zg is not None:  # (the optimizer whose zero_grad() this is: a verification restores it too)
                    self._guard(self._engine.optim.zeroed, sys._getframe(2))
            elif func is _RF_EXIT:
                self.zg = None
                self._watch = bool(self.cleared)
            return func(*args, **kwargs)
        if code == _C_GRAD_SET:
            if args and self._grad_of:  # the .grad being replaced is gone (its id may come back)
                try:
                    old = self._ids.get(id(args[0].grad))
                    if type(old) is _GradRef:
                        old.gone = True
                except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
                    self._internal(e)
            if self.zg is not None and len(args) > 1 and args[1] is None:
                out = func(*args, **kwargs)
                try:
                    self._zero_grad_set(args[0])
                except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
                    self._internal(e)
                return out
            code = _C_OP
        elif code == _C_SET_GRAD:
            return self._grad_mode(func, args, kwargs)
        elif code == _C_BACKWARD:
            return self._backward(_BACKWARD[func], func, args, kwargs)
        return self._record(code, func, args, kwargs)

    def _full(self):
        if self._max_events is not None and len(self.events) >= self._max_events:
            if not self.data.truncated:
                self.data.truncated = True
                self.data.unseen.append(f"recording stopped after {self._max_events} events (max_events)")
            self._engine._limit_reached()
            return True
        return False

    def forget(self):
        """After the recording's conversion: what only recording calls needed."""
        self.prehooked, self.hooked, self.cleared = set(), set(), {}


    _context = staticmethod(context_of)  # (a pure function of the frame flags)

    def _zero_grad_set(self, t):
        """``p.grad = None`` inside Optimizer.zero_grad(): one grad_set event per zero_grad call,
        listing every parameter it cleared (one frame walk, not one per parameter)."""
        zg = self.zg
        if not zg:
            if self._full():
                return
            raw, flags = self._where(sys._getframe())
            idx = len(self.events)
            ev = RawEvent(idx, "grad_set", "torch.Tensor.grad.__set__", raw, [], (), torch.is_grad_enabled(),
                       torch.is_inference_mode_enabled(), self._module(), self._context(flags, True), None,
                       _ZERO_GRAD_DETAIL)
            self.events.append(ev)
            zg.append(ev)
        ref = self._ref(t)
        zg[0].inputs.append(ref)
        self.cleared[_tid_of(ref)] = zg[0].index  # (watched from the end of zero_grad(): its own reads are not)

    def _grad_read(self, t):
        """``t.grad`` read as None by user code or gradient clipping after zero_grad() / ``.grad = None``
        cleared it: evidence of a consumer that came too late. Reads on one line are one event."""
        tid = self.tid_of(t)
        clear = self.cleared.get(tid) if tid is not None else None
        if clear is None:
            return
        f = sys._getframe(3)  # the frame that read .grad (above _grad_read, _other_call and the mode)
        cat = _frames.category(f.f_code)
        if cat != _frames.USER and not cat & F_CLIP:
            return  # torch's own bookkeeping (Module.zero_grad checks `p.grad is not None`), not a consumer
        raw, flags = self._where(f)
        last = self.events[-1] if self.events else None
        if last is not None and last.kind == "grad_read" and last.index >= self._engine.syncer.synced and last.site == raw:
            last.inputs.append(_pk(tid, t.requires_grad, True))
            return
        if self._full():
            return
        idx = len(self.events)
        self.events.append(RawEvent(idx, "grad_read", "torch.Tensor.grad.__get__", raw, [_pk(tid, t.requires_grad, True)],
                                 (), torch.is_grad_enabled(), torch.is_inference_mode_enabled(), self._module(),
                                 self._context(flags, True), None, {"found": None, "cleared_by": clear}))

    def _pre(self, func, args, kwargs, code):
        self.zg = None
        # (x.view_as(other) and the like read only other's shape or dtype: other is not an input)
        ins = _tensors(args, []) if func not in _SHAPE_OF_OTHER else _tensors(args[:1], [])
        if kwargs:
            _tensors(kwargs, ins)
        cf = sys._getframe(3)  # the frame that made the call (above _pre, _record and the mode)
        raw, flags = self._where(cf)
        grad_on = torch.is_grad_enabled()
        kind = "op"
        inplace_target = before = saved = None
        if code == _C_INPLACE:
            inplace_target = args[0] if args and isinstance(args[0], _T) else None
            if inplace_target is None and args and type(args[0]) in (list, tuple) and args[0] \
                    and isinstance(args[0][0], _T):
                kind = "inplace"
                before = [t for t in args[0] if isinstance(t, _T)]  # _foreach_mul_(grads, ...)
        elif kwargs:
            o = kwargs.get("out")
            if o is not None and isinstance(o, _T):
                inplace_target = o
            elif kwargs.get("inplace") is True and ins:
                inplace_target = ins[0]
        if inplace_target is not None:
            kind = "inplace"
            try:
                before = inplace_target._version  # (direct: _compat.DIRECT_TENSOR_ATTRS)
            except RuntimeError:
                before = -1
            saved = self._saved_info(inplace_target)
        return (tuple(self._pack(ins)), ins, raw, flags, grad_on, kind, inplace_target, before, saved, _caller(cf))

    def _post_error(self, pre, e, func=None):
        refs, ins, raw, flags, grad_on, kind, target, before, saved, _ = pre
        idx = len(self.events)
        self.events.append(RawEvent(idx, kind, _name(func) if func is not None else "", raw, refs, (), grad_on, torch.is_inference_mode_enabled(),
                                 self._module(), self._context(flags, grad_on), None,
                                 {"error": f"{type(e).__name__}: {e}"[:500]}))
        self._sink.error_event = idx
        self._sink.error_key = error_key(e)
        return idx

    def _post(self, pre, func, args, kwargs, out):
        events = self.events
        idx = len(events)
        if self._max_events is not None and self._full():
            return
        refs, ins, raw, flags, grad_on, kind, target, before, saved, _ = pre
        special = _SPECIAL.get(func)  # one lookup classifies detach/convert/rewrap/... calls
        inference = torch.is_inference_mode_enabled()
        if flags & _CTX_FLAGS:
            if flags & F_COMPILE and self._eager_compile:
                flags &= ~F_COMPILE  # (compiled code running eagerly: the user's own ops)
            ctx = self._context(flags, grad_on)
            if ctx == "compiled" and raw and _frames.is_traced_line(raw[0][0]):
                ctx = "user"  # an eager op of the compiled graph, at the user's line Dynamo traced it from
                if not self._seen_compiled:
                    self._seen_compiled = True
                    self._note("ops inside torch.compile'd code are shown at the source lines of the frames "
                               "torch.compile traced them from")
            elif ctx == "compiled" and not self._seen_compiled:
                self._seen_compiled = True
                self._note("ops inside torch.compile'd code were recorded without their own source lines (at the "
                           "compiled function's level)")
            hold = flags & F_INIT  # made while a module is built: its parameters and buffers (see _Held)
        else:
            ctx = "user"
            hold = 0
        detail = {}
        cut = None
        outs_t = [out] if isinstance(out, _T) else _tensors(out, [])
        orefs = []
        out_rg = 0
        for o in outs_t:
            if o is target:
                orefs.append(self._ref(o))
                continue
            for i in ins:
                if o is i:  # an input returned as is
                    break
            else:
                i = None
            if i is not None:
                orefs.append(self._ref(o))
                continue
            tid = self._tid(o, producer=idx)
            if (hold or (flags & F_DIST and type(o) is not _T and _is_leaf(o))) and self._ident.slots is None:
                # (and torch.distributed's tensor-subclass leaves: FSDP2's sharded parameters are the detached
                # DTensors nn.Parameter returns for a subclass; `model.to_empty()` swaps them: see _Held)
                r = self._refs[tid]
                if type(r) is _Ref:
                    h = self._refs[tid] = self._ids[id(o)] = _Held(o)
                    h.tid = tid
            try:
                leaf = o.is_leaf
            except RuntimeError:  # (see _is_leaf)
                leaf = True
            rg = o.requires_grad
            orefs.append((1 << 34) | (tid << 2) | (2 if rg else 0) | (1 if leaf else 0))  # _pk
            if not leaf:
                out_rg = 2
                try:
                    # which event made this graph node, by its sequence number: the one node the call
                    # made is its output's (touching grad_fn gives the node a Python object, and a
                    # graph of such nodes is freed recursively: a deep one overflows the C stack)
                    s0 = self._s0
                    seq = s0 if _seq() - s0 == 1 else node_sequence_nr(o.grad_fn)
                    self._node_ev[seq] = idx
                    self._recent.append((o.data_ptr(), tid, idx, o.numel(), True))  # a Recent
                except (AttributeError, RuntimeError, ValueError):  # no storage (data_ptr raises; ValueError: a LazyModule's
                    # UninitializedParameter), or a node without a sequence number
                    pass
            elif rg:
                out_rg = 2
        if not out_rg:
            for r in orefs:
                if r & 2:
                    out_rg = 2
                    break
        if out_rg and grad_on:
            op = self._open
            if len(op) < 100_000:
                op.append((idx, (orefs[0] >> 2) & 0xFFFFFFFF))  # an Open (event, tid)
            else:
                self._saved.open_overflow = True
        in_rg = False
        for r in refs:
            if r & 2:
                in_rg = True
                break

        if kind == "inplace" and target is None:
            detail["targets"] = [self._tid(t) for t in before]
            if self._grad_of:
                gof = [self._grad_leaf(t) for t in before]
                if any(x is not None for x in gof):
                    detail["grads_of"] = gof
        elif kind == "op" and refs:
            # writes hidden inside a torch function (e.g. F.embedding(max_norm=...) renormalising the weight)
            for t, r in zip(ins, refs):
                rv = (r >> 34) - 1  # _ver
                if rv >= 0:
                    try:
                        v = t._version  # (direct: _compat.DIRECT_TENSOR_ATTRS)
                    except RuntimeError:
                        continue
                    if v != rv:
                        kind = "inplace"
                        detail["hidden_write"] = True
                        target = t
                        before = rv
                        saved = self._saved_info(t)
                        break
        if kind == "inplace" and target is not None:
            if self._grad_of:
                gl = self._grad_leaf(target)
                if gl is not None:
                    detail["grad_of"] = gl
            detail["version_before"] = before
            try:
                detail["version_after"] = target._version
            except RuntimeError:
                detail["version_after"] = -1
            detail["target"] = self._tid(target)
            tb = target._base
            if tb is not None:
                detail["base"] = self._tid(tb)
            if saved is not None:  # an event index, 0 included
                detail["saved"] = True
                detail["saved_by"] = saved
            if func == _DATA_SET:
                kind, cut = "cut", "data_set"
                if flags & F_TORCH and ctx == "user":
                    # torch replacing a tensor's data on the user's behalf (a LazyModule materializing its
                    # parameters at the first forward): not a cut the user made (as for detach below)
                    ctx = "library"
            elif grad_on and not (target.is_floating_point() or target.is_complex()) and any(
                    r & 2 for i, r in zip(ins, refs) if i is not target):
                # a grad-requiring value written into an integer/bool tensor: truncated, no gradient
                kind, cut = "cut", "int_cast"
        elif special == "detach":
            if in_rg:
                kind, cut = "cut", _DETACH[func]
                if flags & F_TORCH and ctx == "user":
                    # torch itself detached the tensor on the user's behalf (DDP's constructor broadcasting the
                    # parameters, state_dict(), an observer reading statistics): not a cut the user made, and
                    # not a use of the tensor unless what it made is used (see Diagnosis.cone)
                    ctx = "library"
                for o, r in zip(outs_t, orefs):
                    try:
                        self._recent.append((o.data_ptr(), _tid_of(r), idx, o.numel(), False))  # a Recent
                    except (RuntimeError, ValueError):  # a tensor without storage (data_ptr raises): nothing to match
                        # re-wrapped memory to
                        pass
        elif special == "convert":
            kind, cut = "cut", _CONVERT[func]
            self._escape(idx, func, out, ins)
        elif special == "rewrap":
            if in_rg and (not out_rg or all(o.grad_fn is None for o in outs_t)):
                kind, cut = "cut", "rewrap"
            elif not ins or not in_rg:
                self._reentry(idx, args, detail)
        elif special == "requires_grad":
            kind = "requires_grad"
            v = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
            detail["value"] = bool(v)
            if ctx == "distributed":  # (FSDP2 giving a parameter's sharded form the original's flag: which original)
                orig = fsdp2_original(sys._getframe())
                made = self._ident.tid_of(orig) if orig is not None else None
                if made is not None:
                    detail["made_from"] = made
        elif special == "grad_set":
            kind = "grad_set"
            v = args[1] if len(args) > 1 else None
            detail["value"] = None if v is None else "tensor"
            if refs:
                if v is None:
                    self.cleared[_tid_of(refs[0])] = idx
                else:
                    self.cleared.pop(_tid_of(refs[0]), None)
                self._watch = bool(self.cleared)
        elif special == "hook" and ctx != "distributed":  # (FSDP's / DDP's own hooks: their bookkeeping, an op)
            kind = "hook"
            fn = args[1] if len(args) > 1 else kwargs.get("hook")
            fr = _frames.hook_return(fn)
            if fr is not None:
                detail["hook_return"] = fr.to_json()
            detail["hook"] = _frames.callable_label(fn)
            if func is _POST_ACC_HOOK:  # runs after .grad is written and may change it in place
                detail["post_accumulate"] = True
            cells = getattr(fn, "__closure__", None)
            if cells:  # which closure cells it reads (hooks made in a loop that share one: late binding)
                detail["cells"] = [id(c) for c in cells]
                detail["freevars"] = list(fn.__code__.co_freevars)
                vals = []
                for c in cells:  # their values now (a loop variable changes between registrations)
                    try:
                        v = c.cell_contents
                        vals.append(repr(v)[:60] if type(v) in (int, float, bool, str, type(None)) else None)
                    except ValueError:  # an empty cell
                        vals.append(None)
                detail["cell_values"] = vals
            if ins:
                self.hooked.add(id(ins[0]))
            gf = ins[0].grad_fn if ins else None
            if gf is not None:  # the hook rewrites what this node receives: its hook sees it afterwards
                self.prehooked.add(node_sequence_nr(gf))
        elif special == "retain":
            for t in ins:
                self.tensors[self._tid(t)].retains_grad = True
        elif special is None and (ctx == "user" or ctx == "checkpoint" or ctx == "compiled"):
            if in_rg and outs_t and not out_rg and func not in _SHAPE_ONLY:
                if inference:
                    kind, cut = "cut", "inference_mode"
                elif not grad_on:
                    kind, cut = "cut", ("checkpoint" if ctx == "checkpoint" else "no_grad")
                else:
                    n = _short(_name(func)).rsplit(".", 1)[-1]
                    kind, cut = "cut", ("int_cast" if n in _CAST_NAMES else "nondiff")
            elif func in _ZERO_GRAD_OPS and in_rg and grad_on:
                kind, cut = "cut", "zero_grad_op"
            elif self._values or self._arrays:
                self._reentry(idx, args, detail)
        if grad_on and out_rg and in_rg and kind != "inplace":
            cons = self._consumers
            otids = [(o >> 2) & 0xFFFFFFFF for o in orefs]  # _tid_of
            for r in refs:  # every input, not only grad-requiring ones: a saved mask counts too
                rt = (r >> 2) & 0xFFFFFFFF
                lst = cons.get(rt)
                if lst is None:
                    cons[rt] = otids[:]
                else:
                    lst += otids
                    if len(lst) > 64:  # only recent consumers can still hold saved tensors that matter
                        del lst[:32]
        if func in _FILLS and nonfinite_scalar(args, kwargs):  # (a few calls only: their Python numbers)
            detail["nonfinite_fill"] = True
        st = self._mod_stack
        name = _NAMES.get(func) or _name(func)
        events.append(RawEvent(idx, kind, name, raw, refs, tuple(orefs), grad_on, inference,
                            st[-1].path if st else None, ctx, cut, detail or _NO_DETAIL))
        if out_rg and in_rg and grad_on and cut is None and kind == "op" and len(orefs) > 1 and special is None:
            # max(dim=...), topk, sort, max_pool(return_indices=True): the values carry gradient, the
            # indices do not. Taking the indices is a cut of its own (a second event on the same line).
            nd = [r for r, o in zip(orefs, outs_t) if not r & 2 and not o.is_floating_point() and not o.is_complex()]
            if nd:
                j = len(events)
                tens = self.tensors
                for r in nd:
                    tens[(r >> 2) & 0xFFFFFFFF].producer = j
                events.append(RawEvent(j, "cut", name, raw, refs, tuple(nd), grad_on, inference,
                                    st[-1].path if st else None, ctx, "nondiff", {"outputs_of": idx}))

    # --- grad mode -------------------------------------------------------------------------
    def _grad_mode(self, func, args, kwargs):
        prev = torch.is_grad_enabled()
        out = func(*args, **kwargs)
        try:
            if not self._full():
                raw, flags = self._where(sys._getframe())
                ctx = self._context(flags, prev)
                enabled = bool(args[0]) if args else bool(kwargs.get("mode", True))
                detail = {"enabled": enabled, "prev": prev}
                lib = _frames.library_caller(sys._getframe())
                if lib:
                    detail["lib_fn"] = lib  # entered inside a library function (e.g. Normal.sample)
                idx = len(self.events)
                self.events.append(RawEvent(idx, "grad_mode", "torch.set_grad_enabled", raw, (), (), prev,
                                         torch.is_inference_mode_enabled(), self._module(), ctx, None, detail))
        except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
            self._internal(e)
        return out
