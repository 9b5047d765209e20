"""Optimizer steps: the global step hooks (closures included), and the step's parameter writes
recorded as one event from version counters.
"""
from __future__ import annotations

import sys
from functools import partial

import torch

from ..model import Event
from . import _frames
from ._active import _active, _dispatch, _suspend_for_step
from ._compat import version as _version
from ._ops import _is_compiling
from ._records import Open, PendingStep
from ._refs import _pk


_record_optimizer_step = _dispatch("_optimizer_step", 1)  # (optimizer, args, kwargs)


def _on_optimizer_step(optimizer, args, kwargs):
    """Record the step's start, then take this thread's recorders off the mode stack for the
    step's duration: its internals (dozens of calls per parameter) are summarised from version
    counters when it ends, so they need not pass through any mode. A recorder that is not on
    top of the stack (a user's mode above it) stays and uses the ``_in_opt`` fast path.

    A step given a closure (LBFGS; PyTorch Lightning's automatic optimization runs the whole
    training step as one) runs user code inside it: the closure is wrapped so that it runs
    recorded, and the step's record starts when the closure returns (when the gradients exist)."""
    closure = kwargs.get("closure") if "closure" in kwargs else (args[1] if len(args) > 1 else None)
    if _is_compiling():
        _record_optimizer_step(optimizer, args, kwargs)
        return None
    if callable(closure) and _active():
        for r in _active():
            r._opt_closure = True
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
        if r._opt_pending is not None:  # a closure called again (LBFGS): the updates so far
            r._guard(r._optimizer_step_done, optimizer)
        r._resume()
        r._in_opt = r._opt_closure = False
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
        r._in_opt = r._opt_closure = False
        if r._on:
            r._guard(r._optimizer_step_done, optimizer)


class _Optim:
    def _graph_open(self) -> bool:
        """Can a graph built by recorded ops still hold saved tensors? False once every recorded op
        that produced a grad-requiring result since then was part of a backward that freed its graph
        (or its results are gone)."""
        if self._open_overflow:
            return True
        op = self._open
        if op:
            refs = self._refs
            op[:] = [o for o in op if (r := refs.get(Open._make(o).tid)) is not None and r() is not None]
        return bool(op)

    def _optimizer_step(self, opt):
        if self._opt_pending is not None:  # the previous step raised and nothing closed its record
            self._note("an optimizer.step() raised inside the trace; torch calls between it and the next module "
                       "call were not recorded")
            self._optimizer_step_done(None)
        if self._full():
            return
        raw, flags = _frames.walk(sys._getframe(), self._entry)
        params = []
        # the step's writes into parameters are recorded as one event when it ends: versions now,
        # and whether autograd still holds any of them (only if a recorded graph may still be alive)
        tensors, before, saved = [], [], {}
        probe = self._graph_open()
        cleared = self._cleared
        found_none = []  # held, cleared since backward filled it: the step reads None and skips it
        for g in opt.param_groups:
            for p in g["params"]:
                tid = self._tid(p)
                params.append(tid)
                if p.grad is None:
                    if tid in cleared:
                        found_none.append(tid)
                    continue
                tensors.append((p, tid))
                before.append(_version(p))
                if probe:
                    sv = self._saved_info(p)
                    if sv is not None:
                        saved[tid] = sv
        self._trainable.update(params)
        self._in_opt = True
        idx = len(self.events)
        detail = {"class": type(opt).__name__, "params": params}
        if found_none:
            detail["found_none"] = found_none
        self.events.append(Event(idx, "optimizer_step", f"{type(opt).__name__}.step", raw, (), (),
                                 torch.is_grad_enabled(), False, None, "user", None, detail))
        self._opt_pending = PendingStep(idx, raw, tensors, before, saved, type(opt).__name__)

    def _optimizer_step_done(self, opt):
        pend, self._opt_pending = self._opt_pending, None
        self._in_opt = False
        if pend is None or self._full():
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
        idx = len(self.events)
        self.events.append(Event(idx, "inplace", f"{cls}.step", raw, tuple(refs), (),
                                 False, False, None, "optimizer", None, detail))
