"""Optimizer steps: the global step hooks (closures included), and the step's parameter writes
recorded as one event from version counters.
"""
from __future__ import annotations

import sys
import weakref
from functools import partial

import torch

from . import _frames
from ._active import _active, _dispatch, _suspend_for_step
from ._compat import version as _version
from ._ops import _is_compiling
from ._records import PendingStep, RawEvent
from ._refs import _pk


_record_optimizer_step = _dispatch("_optimizer_step", 1)  # (Recorder._optimizer_step is Optim.step)  # (optimizer, args, kwargs)


def _on_optimizer_step(optimizer, args, kwargs):
    """Record the step's start, then take this thread's recorders off the mode stack for the
    step's duration: its internals (dozens of calls per parameter) are summarised from version
    counters when it ends, so they need not pass through any mode. A recorder that is not on
    top of the stack (a user's mode above it) stays and uses the ``in_opt`` fast path.

    A step given a closure (LBFGS; PyTorch Lightning's automatic optimization runs the whole
    training step as one) runs user code inside it: the closure is wrapped so that it runs
    recorded, and the step's record starts when the closure returns (when the gradients exist)."""
    closure = kwargs.get("closure") if "closure" in kwargs else (args[1] if len(args) > 1 else None)
    if _is_compiling():
        _record_optimizer_step(optimizer, args, kwargs)
        return None
    if callable(closure) and _active():
        for r in _active():
            r.optim.closure = True
        _suspend_for_step()
        wrapped = partial(_run_closure, optimizer, closure)
        if "closure" in kwargs:
            return args, {**kwargs, "closure": wrapped}
        return (args[0], wrapped, *args[2:]), kwargs
    _record_optimizer_step(optimizer, args, kwargs)
    _suspend_for_step()
    return None


def _run_closure(optimizer, closure, *a, **k):
    """The user's closure, recorded; then the step's record begins (its updates follow)."""
    for r in _active():
        if r.optim.pending is not None:  # a closure called again (LBFGS): the updates so far
            r._guard(r.optim.step_done, optimizer)
        r._resume()
        r.calls.in_opt = r.optim.closure = False
    try:
        return closure(*a, **k)
    finally:
        _record_optimizer_step(optimizer, (optimizer,), {})
        _suspend_for_step()


def _on_optimizer_step_done(optimizer, args, kwargs):
    if _is_compiling():  # Dynamo inlines global hooks: keep them out of the compiled graph
        return
    for r in _active():  # outermost first: suspended recorders go back in their order
        r._resume()
        r.calls.in_opt = r.optim.closure = False
        if r.calls.on:
            r._guard(r.optim.step_done, optimizer)


class Optim:
    """Optimizer steps: ``step`` when one begins (its parameters, their versions, which are saved for
    backward), ``step_done`` when it ends (the parameters it wrote: one ``inplace`` event)."""

    def __init__(self, sink, engine, saved):
        self._events = sink.events
        self._note = sink.note
        self._engine = engine  # the recorder: its entry frame, tensor ids, event limit and optimizer flag
        self._saved = saved
        self.pending = None  # PendingStep: inside optimizer.step()
        self.closure = False  # inside optimizer.step(closure), before the closure ran
        self.trainable: set = set()  # tids of every parameter an optimizer holds
        # the optimizers that stepped or cleared gradients (a verification restores their state, and what they hold
        # is what the step trains: also when its backward failed before any step)
        self.seen = weakref.WeakSet()
        self.zeroed_opts = weakref.WeakSet()  # those that cleared gradients (see trained)

    def trained(self) -> set:
        """Tids of the parameters the step trains: those an optimizer held when it stepped, and those of the
        optimizers whose zero_grad() ran (what the step would have trained when its backward failed first)."""
        out = set(self.trainable)
        tid_of = self._engine.identity.tid_of
        for opt in list(self.zeroed_opts):
            for g in opt.param_groups:
                for p in g["params"]:
                    tid = tid_of(p)
                    if tid is not None:
                        out.add(tid)
        return out

    def zeroed(self, frame) -> None:
        """An ``Optimizer.zero_grad()`` began: the optimizer is the ``self`` of the first frame above ``frame`` that
        runs a ``zero_grad`` (torch's, or an optimizer's own override)."""
        f = frame
        for _ in range(6):
            if f is None:
                return
            if f.f_code.co_name == "zero_grad":
                opt = _frames.locals_of(f).get("self")
                if isinstance(opt, torch.optim.Optimizer):
                    _remember(self.seen, opt)
                    _remember(self.zeroed_opts, opt)
                return
            f = f.f_back

    def step(self, opt):
        eng = self._engine
        _remember(self.seen, opt)
        if self.pending is not None:  # the previous step raised and nothing closed its record
            self._note("an optimizer.step() raised inside the trace; torch calls between it and the next module "
                       "call were not recorded")
            self.step_done(None)
        if eng._full():
            return
        raw, flags = _frames.walk(sys._getframe(), eng.entry)
        params = []
        # the step's writes into parameters are recorded as one event when it ends: versions now,
        # and whether autograd still holds any of them (only if a recorded graph may still be alive)
        tensors, before, saved = [], [], {}
        probe = self._saved.graph_open()
        cleared = eng.calls.cleared
        tid_of, saved_info = eng.identity.tid, self._saved.info
        found_none = []  # held, cleared since backward filled it: the step reads None and skips it
        for g in opt.param_groups:
            for p in g["params"]:
                tid = tid_of(p)
                params.append(tid)
                if p.grad is None:
                    if tid in cleared:
                        found_none.append(tid)
                    continue
                tensors.append((p, tid))
                before.append(_version(p))
                if probe:
                    sv = saved_info(p)
                    if sv is not None:
                        saved[tid] = sv
        self.trainable.update(params)
        eng.set_in_optimizer(True)
        idx = len(self._events)
        detail = {"class": type(opt).__name__, "params": params}
        if found_none:
            detail["found_none"] = found_none
        self._events.append(RawEvent(idx, "optimizer_step", f"{type(opt).__name__}.step", raw, (), (),
                                 torch.is_grad_enabled(), False, None, "user", None, detail))
        self.pending = PendingStep(idx, raw, tensors, before, saved, type(opt).__name__)

    def step_done(self, opt):
        pend, self.pending = self.pending, None
        eng = self._engine
        eng.set_in_optimizer(False)
        if pend is None or eng._full():
            return
        step_idx, raw, tensors, before, saved, cls = pend  # PendingStep
        tids, vb, va, refs = [], [], [], []
        for (p, tid), v in zip(tensors, before):
            now = _version(p)
            if now != v:
                tids.append(tid)
                vb.append(v)
                va.append(now)
                refs.append(_pk(tid, p.requires_grad, p.is_leaf, now))
        if not tids:
            return
        detail = {"targets": tids, "versions_before": vb, "versions_after": va, "step": step_idx}
        hit = [t for t in tids if t in saved]
        if hit:
            detail["saved"] = hit
            detail["saved_by"] = {t: saved[t] for t in hit}
        idx = len(self._events)
        self._events.append(RawEvent(idx, "inplace", f"{cls}.step", raw, tuple(refs), (),
                                 False, False, None, "optimizer", None, detail))


def _remember(weak_set, opt) -> None:
    """Keep ``opt`` in ``weak_set`` (an optimizer without weak references is not kept: a verification does not
    restore it)."""
    try:
        weak_set.add(opt)
    except TypeError:
        pass
