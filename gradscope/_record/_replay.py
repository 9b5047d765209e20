"""Verification by experiment: re-run the user's step once per candidate cut with that cut undone
(``_intervene.Interventions``) and see whether each starved target's gradient comes back, or the failing
backward succeeds. Called through :meth:`gradscope.Trace.verify`.

State restored before each re-run and after the last (what verify found when it started): every parameter and
buffer the trace saw (values, ``.grad``, ``requires_grad``), the modules' train/eval flags, the optimizers that
stepped (their state_dict), and the RNG states (torch, CUDA when initialised, Python's ``random``, NumPy's
global one). Not restored: files written, prints, other Python state (the re-run repeats the user's code).
"""
from __future__ import annotations

import copy
import random
import sys
import time
import warnings

import torch

from ..core.verification import FAILURE, NOT_JOINED, NOT_REACHED, TargetCheck, TargetResult, Trial, Verification, error_line
from ..diagnosis.candidates import LATENT
from ._intervene import Interventions
from ._quiet import _Quiet

__all__ = ["State", "run_trials", "step_identity"]


def step_identity(step):
    """(file, qualified name) of the function a step runs (a bound method's, a partial's, a callable's)."""
    f = step
    for _ in range(4):
        if hasattr(f, "__func__"):
            f = f.__func__
        elif hasattr(f, "func") and callable(f.func):  # functools.partial
            f = f.func
        elif hasattr(f, "__wrapped__"):
            f = f.__wrapped__
        else:
            break
    co = getattr(f, "__code__", None)
    if co is None:
        co = getattr(type(f).__call__, "__code__", None) if callable(f) else None
    if co is None:
        return None
    return co.co_filename, getattr(co, "co_qualname", co.co_name)


class State:
    """What a re-run may change, captured once, put back by :meth:`restore`."""

    def __init__(self, tensors, modules, optimizers, first_flags=None):
        # id(tensor) -> its requires_grad when the trace first saw it, for tensors whose flag the step switched: a
        # re-run starts from that (a step that failed between a framework's freeze and its unfreeze, Lightning's
        # toggle_optimizer, left it switched); the last restore puts back the flag as verify found it
        self.first_flags = first_flags or {}
        with torch.no_grad(), _Quiet():
            self.tensors = [(t, t.detach().clone(), None if t.grad is None else t.grad.detach().clone(),
                             t.requires_grad) for t in tensors if t.is_leaf]
        self.modules = [(m, m.training) for m in modules]
        self.optimizers = [(o, copy.deepcopy(o.state_dict())) for o in optimizers]
        self._opt_fast = [_opt_snapshot(o) for o in optimizers]
        self.rng = torch.get_rng_state()
        self.cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None
        self.py = random.getstate()
        np = sys.modules.get("numpy")
        self.np = np.random.get_state() if np is not None else None

    def restore(self, clear_grads=False):
        """Put everything back; ``clear_grads``: leave every .grad None instead (before a re-run: a gradient the
        re-run shows must be its own, not one left from before)."""
        with torch.no_grad(), _Quiet():
            for t, v, g, rg in self.tensors:
                if not t.is_leaf:  # (an undone cut let a re-run write history into it: a leaf again)
                    try:
                        t.detach_()
                    except RuntimeError:
                        pass
                if t.shape != v.shape or t.dtype != v.dtype:
                    t.data = v.clone()
                else:
                    t.copy_(v)
                t.grad = None if g is None or clear_grads else g.clone()
                if clear_grads:
                    rg = self.first_flags.get(id(t), rg)
                if t.requires_grad != rg:
                    t.requires_grad_(rg)
        for m, tr in self.modules:
            m.train(tr)
        for (o, sd), snap in zip(self.optimizers, self._opt_fast):
            if not _opt_restore(o, snap):  # (its state was rebuilt or reshaped: the full load)
                o.load_state_dict(copy.deepcopy(sd))
        torch.set_rng_state(self.rng)
        if self.cuda is not None:
            torch.cuda.set_rng_state_all(self.cuda)
        random.setstate(self.py)
        np = sys.modules.get("numpy")
        if self.np is not None and np is not None:
            np.random.set_state(self.np)


def _run_once(make_trace, step, args, kwargs, undos, step_id, names_frame, measure):
    """One re-run with ``undos`` undone: (interventions, the re-run's trace, its error, seconds, measurements).
    ``make_trace`` None: untraced (the targets are live tensors whose .grad tells), else under a fresh trace."""
    tr = make_trace() if make_trace is not None else None
    iv = Interventions(undos, step_id)
    err = None
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with iv:
            if tr is not None:
                tr._start_at(sys._getframe(0), names_frame)
            try:
                step(*args, **kwargs)
            except Exception as e:  # the re-run's own failure is a result
                err = e
            finally:
                if tr is not None:
                    tr.__exit__(type(err) if err is not None else None, err, None)
    secs = time.perf_counter() - t0
    return iv, tr, err, secs, measure(tr, err)


def run_trials(make_trace, step, args, kwargs, plan, state, names_frame, measure, signature, *, budget_s=None,
               pairs=True, max_pairs=10, prepare=None, untraced=False):
    """Run the baseline and each planned undo; returns (Verification, trials). ``plan``: [(Undo, reason or
    None)]; ``measure(trace, err) -> {target: TargetResult}``; ``signature(trace) -> tuple`` of the flow that
    must repeat."""
    v = Verification(budget_s=budget_s)
    t_all = time.perf_counter()
    step_id = step_identity(step)
    try:
        state.restore(clear_grads=True)
        _, base_tr, base_err, secs, base = _run_once(make_trace, step, args, kwargs, (), step_id, names_frame, measure)
        v.step_seconds = secs
        v.baseline = base
        v.base_signature = signature(base_tr)
        untraced = untraced() if callable(untraced) else untraced
        tried = []
        latent = []
        for u, reason in plan:
            if reason == LATENT:
                latent.append(u)
                continue
            if reason is not None:
                v.trials.append(Trial(u, tried=False, reason=reason))
                continue
            if budget_s is not None and time.perf_counter() - t_all > budget_s:
                v.skipped += 1
                continue
            state.restore(clear_grads=True)
            _prepare(prepare, (u,))
            iv, _, err, secs, res = _run_once(None if untraced else make_trace, step, args, kwargs, (u,), step_id,
                                              names_frame, measure)
            t = Trial(u, results=res, hits=iv.hits[0], seconds=secs,
                      error=None if err is None else error_line(err))
            if iv.hits[0] == 0:
                t.tried = False
                t.reason = iv.errors[0] if iv.errors else NOT_REACHED
            elif u.kind in ("numpy", "item", "tolist") and iv.joins == 0:
                t.tried = False
                t.reason = iv.errors[0] if iv.errors else NOT_JOINED
            v.trials.append(t)
            if t.tried:
                tried.append(t)
        v.pair_candidates = [t.undo for t in tried] + latent
    finally:
        state.restore()
    v.seconds = time.perf_counter() - t_all
    return v


def _opt_snapshot(o):
    """An optimizer's state as it is now, for an in-place restore: per parameter, each entry with its tensor (the
    object a re-run updates in place) and a copy of its values; each param group's settings."""
    try:
        with torch.no_grad():
            state = {p: {k: (v, v.detach().clone()) if isinstance(v, torch.Tensor) else (None, copy.deepcopy(v))
                         for k, v in s.items()} for p, s in o.state.items()}
        groups = [{k: copy.deepcopy(v) for k, v in g.items() if k != "params"} for g in o.param_groups]
    except Exception:  # (an optimizer whose state cannot be read this way: the full load restores it)
        return None
    return state, groups, [list(g["params"]) for g in o.param_groups]


def _opt_restore(o, snap) -> bool:
    """Put optimizer ``o``'s state back in place (its own tensors get their values back); False when it cannot be
    done so (parameters or entries added, removed or reshaped: :meth:`State.restore` then loads the state dict)."""
    if snap is None:
        return False
    state, groups, params = snap
    if len(o.param_groups) != len(groups) or any(
            len(g["params"]) != len(ps) or any(a is not b for a, b in zip(g["params"], ps))
            for g, ps in zip(o.param_groups, params)):
        return False
    cur = o.state
    if any(p not in state for p in cur):
        for p in [p for p in cur if p not in state]:  # state a re-run created (a first step): gone again
            del cur[p]
    with torch.no_grad():
        for p, entries in state.items():
            s = cur.get(p)
            if s is None or s.keys() != entries.keys():
                return False
            for k, (t, v) in entries.items():
                if t is None:
                    s[k] = copy.deepcopy(v)
                elif s[k] is t and t.shape == v.shape and t.dtype == v.dtype:
                    t.copy_(v)
                else:
                    s[k] = v.clone()
    for g, saved in zip(o.param_groups, groups):
        g.update(copy.deepcopy(saved))
    return True


def _prepare(prepare, undos):
    """Before a re-run that skips a freeze: the tensors it froze require grad again, as before it ran."""
    for u in undos:
        fn = (prepare or {}).get(u.event)
        if fn is not None:
            fn()


def run_pair(make_trace, step, args, kwargs, a, b, state, names_frame, measure, prepare=None, untraced=False):
    """One re-run with two undos at once (when no single one restored a target)."""
    step_id = step_identity(step)
    try:
        state.restore(clear_grads=True)
        _prepare(prepare, (a, b))
        iv, _, err, secs, res = _run_once(None if untraced else make_trace, step, args, kwargs, (a, b), step_id,
                                          names_frame, measure)
    finally:
        state.restore()
    return Trial(a, also=b, results=res, hits=min(iv.hits), seconds=secs,
                 error=None if err is None else error_line(err))


__all__ += ["run_pair", "FAILURE", "TargetCheck", "TargetResult"]
