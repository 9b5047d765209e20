"""``gradscope run`` verifies by default: the script re-run in a subprocess once per candidate cut with that cut
undone (``GRADSCOPE_UNDO``: the undos as JSON, read by :func:`child_undos` in the child's ``run_script``), each
child reporting its gradients as ``--json``; then the same verdicts as :meth:`gradscope.Trace.verify`, and pairs of
undos for a target no single one restored.

Each re-run records only up to the backward call where the problem was first seen (:func:`problem_step`: ``--steps``
for the child) and then ends the script (``GRADSCOPE_END``: the child raises :class:`RunEnded` at its next torch call),
so a long training script costs one step's time per candidate, not a whole run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from .core.verification import FAILURE, NOT_JOINED, NOT_REACHED, TargetResult, Trial, Undo, Verification

__all__ = ["verify_script", "child_undos", "child_ends", "problem_step", "ENV", "END_ENV"]

ENV = "GRADSCOPE_UNDO"
END_ENV = "GRADSCOPE_END"  # set: the re-run ends the script when its recording stops (--steps reached)


def child_undos():
    """The undos a verifying parent asked this run for (None when it is not such a child)."""
    raw = os.environ.get(ENV)
    if not raw:
        return None
    return [Undo.from_json(d) for d in json.loads(raw)]


def child_ends() -> bool:
    """Whether this run is a verifying parent's re-run that ends the script once its recording stops."""
    return bool(os.environ.get(END_ENV)) and child_undos() is not None


def problem_step(data, targets):
    """How many backward calls a re-run must record to show every target's problem: the call where each was
    first seen (a failing call; the first call that left a starved parameter without a healthy gradient), the
    latest of them; None when the recorded run has no backward call."""
    bws = data.backwards
    if not bws:
        return None
    need = 0
    for name, (tid, status, _) in targets.items():
        if name == FAILURE:  # (a failing backward call; else the failure came after the last one: one more)
            k = next((i for i, b in enumerate(bws) if b.error), None)
            need = max(need, len(bws) + 1 if k is None else k + 1)
            continue
        k = next((i for i, b in enumerate(bws) if tid is not None and _starved_at(b, tid)), None)
        need = max(need, len(bws) if k is None else k + 1)
    return need or None


def _starved_at(b, tid) -> bool:
    g = b.leaf_grads.get(tid)
    return g is None or g.status != "received"


def _child(script_cmd, undos, steps, timeout, server=None):
    """One re-run of the script with ``undos`` undone: (its --json document or None, seconds, why not). In a fork
    of ``server`` (a :class:`~gradscope._forkserver.ForkServer`) when it can, else a fresh subprocess."""
    env = dict(os.environ)
    env[ENV] = json.dumps([u.to_json() for u in undos])
    argv = ["run", "--json", "--no-verify", "--quiet"]
    if steps:
        argv += ["--steps", str(steps)]
        env[END_ENV] = "1"
    t0 = time.perf_counter()
    timeout = max(timeout, 1)
    try:
        got = server.run(argv + list(script_cmd), env, timeout) if server is not None else None
        if got is None:
            p = subprocess.run([sys.executable, "-m", "gradscope", *argv, *script_cmd], env=env, capture_output=True,
                               text=True, timeout=timeout)
            got = p.returncode, p.stdout
    except (subprocess.TimeoutExpired, TimeoutError):
        return None, time.perf_counter() - t0, "the re-run ran past the verification budget"
    secs = time.perf_counter() - t0
    try:
        return json.loads(got[1]), secs, None
    except ValueError:
        return None, secs, f"the re-run printed no JSON (exit code {got[0]})"


def _measure(doc, targets):
    rows = {r["name"]: r for r in doc.get("params", [])}
    reached = set(doc["reached"]) if "reached" in doc else None
    out = {}
    for name in targets:
        if name == FAILURE:
            f = doc.get("failure")
            out[name] = TargetResult("ok") if f is None else TargetResult("error", error=f.get("summary", "")[:300])
            continue
        r = rows.get(name)
        if r is not None and r["status"] == "received" and reached is not None and name not in reached:
            out[name] = TargetResult("stale", r.get("norm"))  # (a .grad left from an earlier step)
            continue
        out[name] = TargetResult("missing") if r is None else TargetResult(
            "none" if r["status"] == "frozen" else r["status"], r.get("norm"))
    return out


def _signature(doc, upto=None):
    """The cuts of a run (op, kind, line), those made up to event ``upto`` when given."""
    return tuple((c.get("op"), c.get("cut"), (c.get("site") or {}).get("lineno")) for c in doc.get("cuts", [])
                 if upto is None or c.get("index", 0) <= upto)


def _trial(doc, undos, targets, secs):
    """The Trial of one re-run's document (``undos``: one, or a pair)."""
    hits = doc.get("undo_hits") or [0] * len(undos)
    t = Trial(undos[0], also=undos[1] if len(undos) > 1 else None, results=_measure(doc, targets),
              hits=min(hits) if hits else 0, seconds=secs)
    if not t.hits:
        t.tried, t.reason = False, NOT_REACHED
    elif any(u.kind in ("numpy", "item", "tolist") for u in undos) and not doc.get("undo_joins"):
        errors = doc.get("undo_errors") or []
        t.tried, t.reason = False, errors[0] if errors else NOT_JOINED
    return t


def verify_script(tr, script_cmd, *, budget_s, steps, err, source=None, server=None):
    """Verify ``tr`` (a finished ``gradscope run`` trace of ``script_cmd``: the script and its arguments, or
    ``-m``, the module and its arguments) by re-running it; ``source`` is the file that runs as ``__main__`` (the
    script, or the module's file); progress lines go to ``err``. ``server``: a started
    :class:`~gradscope._forkserver.ForkServer` the re-runs fork from (else one is started here, and closed)."""
    from . import _verify

    script = os.path.abspath(source or script_cmd[0])
    with tr._paused():
        targets, named, diag, plan, skipped, _ = _verify.plan_for(tr, (script, "<module>"))
        data = tr.data
    v = Verification(budget_s=budget_s, skipped=skipped)
    if not targets:
        return v

    runnable = [u for u, r in plan if r is None]
    # (each re-run records up to the backward call that showed the problems, then ends the script)
    upto = problem_step(data, targets)
    if steps and upto:
        upto = min(upto, steps)
    upto = upto or steps
    last = data.backwards[upto - 1].event if upto and upto <= len(data.backwards) else None
    what = f"`-m {script_cmd[1]}`" if script_cmd[0] == "-m" and len(script_cmd) > 1 else "the script"
    until = f", each up to backward call {upto}" if upto else ""
    print(f"gradscope: verifying {len(targets)} problem target(s) by re-running {what} once per candidate cut "
          f"({len(runnable)} + 1 unmodified{until}; budget {budget_s:g} s; --no-verify skips)", file=err, flush=True)
    t_all = time.perf_counter()
    from ._forkserver import ForkServer

    own = server is None
    if own:
        server = ForkServer().start()  # (its imports run while the recorded run is turned into JSON)
    try:
        return _run_all(tr, script_cmd, budget_s, upto, last, targets, named, diag, plan, v, t_all, server, err)
    finally:
        if own:
            server.close()


def _run_all(tr, script_cmd, budget_s, upto, last, targets, named, diag, plan, v, t_all, server, err):
    from . import _verify
    from .cli import trace_json
    from .diagnosis.candidates import LATENT

    doc0 = trace_json(tr)
    base, secs, why = _child(script_cmd, [], upto, budget_s, server)
    v.step_seconds = secs
    if base is None:
        v.repeatable, v.reason = False, why
    else:
        v.baseline = _measure(base, targets)
        if _signature(base) != _signature(doc0, last):
            v.repeatable, v.reason = False, "its cuts differ from the recorded run's"
        elif FAILURE in targets and v.baseline[FAILURE].good:
            v.repeatable, v.reason = False, "the unmodified re-run did not fail"
    tried = []
    if v.repeatable:
        latent = []
        for u, reason in plan:
            if reason == LATENT:
                latent.append(u)
                continue
            if reason is not None:
                v.trials.append(Trial(u, tried=False, reason=reason))
                continue
            left = budget_s - (time.perf_counter() - t_all)
            if left <= 0:
                v.skipped += 1
                continue
            doc, secs, why = _child(script_cmd, [u], upto, left, server)
            if doc is None:
                v.trials.append(Trial(u, tried=False, reason=why, seconds=secs))
                continue
            t = _trial(doc, [u], targets, secs)
            v.trials.append(t)
            if t.tried:
                tried.append(t)
        v.pair_candidates = [t.undo for t in tried] + latent
    if v.repeatable:
        sites = _verify.decide(v, targets, named, diag, ())

        def pair(_mt, _step, _args, _kwargs, a, b, *_rest):
            left = budget_s - (time.perf_counter() - t_all)
            if left <= 0:
                v.skipped += 1
                return Trial(a, also=b, tried=False, reason="not tried within the verification budget")
            doc, secs, why = _child(script_cmd, [a, b], upto, left, server)
            if doc is None:
                return Trial(a, also=b, tried=False, reason=why, seconds=secs)
            return _trial(doc, [a, b], targets, secs)

        _verify.pairs(v, targets, sites, pair, diag)
    else:
        from .core.verification import TargetCheck

        for name, (tid, status, _) in targets.items():
            v.targets[name] = TargetCheck(name, status, "not_repeatable")
    v.seconds = time.perf_counter() - t_all
    done = sum(1 for t in v.trials if t.tried)
    print(f"gradscope: verification took {v.seconds:.1f} s ({done} re-run(s) with an undo"
          + (f", {v.skipped} not tried within the budget" if v.skipped else "") + ")", file=err, flush=True)
    return v
