"""``gradscope run`` verifies by default: the script re-run in a subprocess once per candidate cut with that cut
undone (``GRADSCOPE_UNDO``: the undos as JSON, read by :func:`child_undos` in the child's ``run_script``), each
child reporting its gradients as ``--json``; then the same verdicts as :meth:`gradscope.Trace.verify`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from .core.verification import FAILURE, TargetResult, Trial, Undo, Verification

__all__ = ["verify_script", "child_undos", "ENV"]

ENV = "GRADSCOPE_UNDO"


def child_undos():
    """The undos a verifying parent asked this run for (None when it is not such a child)."""
    raw = os.environ.get(ENV)
    if not raw:
        return None
    return [Undo.from_json(d) for d in json.loads(raw)]


def _child(script_cmd, undos, steps, timeout):
    env = dict(os.environ)
    env[ENV] = json.dumps([u.to_json() for u in undos])
    cmd = [sys.executable, "-m", "gradscope", "run", "--json", "--no-verify", "--quiet"]
    if steps:
        cmd += ["--steps", str(steps)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd + script_cmd, env=env, capture_output=True, text=True, timeout=max(timeout, 1))
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0, "the re-run ran past the verification budget"
    secs = time.perf_counter() - t0
    try:
        return json.loads(p.stdout), secs, None
    except ValueError:
        return None, secs, f"the re-run printed no JSON (exit code {p.returncode})"


def _measure(doc, targets):
    rows = {r["name"]: r for r in doc.get("params", [])}
    out = {}
    for name in targets:
        if name == FAILURE:
            f = doc.get("failure")
            out[name] = TargetResult("ok") if f is None else TargetResult("error", error=f.get("summary", "")[:300])
            continue
        r = rows.get(name)
        out[name] = TargetResult("missing") if r is None else TargetResult(
            "none" if r["status"] == "frozen" else r["status"], r.get("norm"))
    return out


def _signature(doc):
    return tuple((c.get("op"), c.get("cut"), (c.get("site") or {}).get("lineno")) for c in doc.get("cuts", []))


def verify_script(tr, script_cmd, *, budget_s, steps, err, source=None):
    """Verify ``tr`` (a finished ``gradscope run`` trace of ``script_cmd``: the script and its arguments, or
    ``-m``, the module and its arguments) by re-running it; ``source`` is the file that runs as ``__main__`` (the
    script, or the module's file); progress lines go to ``err``."""
    from . import _verify
    from .cli import trace_json

    script = os.path.abspath(source or script_cmd[0])
    with tr._paused():
        targets, named, diag, plan, skipped, _ = _verify.plan_for(tr, (script, "<module>"))
    v = Verification(budget_s=budget_s, skipped=skipped)
    if not targets:
        return v
    runnable = [u for u, r in plan if r is None]
    what = f"`-m {script_cmd[1]}`" if script_cmd[0] == "-m" and len(script_cmd) > 1 else "the script"
    print(f"gradscope: verifying {len(targets)} problem target(s) by re-running {what} once per candidate cut "
          f"({len(runnable)} + 1 unmodified; budget {budget_s:g} s; --no-verify skips)", file=err, flush=True)
    t_all = time.perf_counter()
    doc0 = trace_json(tr)
    base, secs, why = _child(script_cmd, [], steps, budget_s)
    v.step_seconds = secs
    if base is None:
        v.repeatable, v.reason = False, why
    else:
        v.baseline = _measure(base, targets)
        if _signature(base) != _signature(doc0):
            v.repeatable, v.reason = False, "its cuts differ from the recorded run's"
    if v.repeatable:
        for u, reason in plan:
            if reason is not None:
                v.trials.append(Trial(u, tried=False, reason=reason))
                continue
            left = budget_s - (time.perf_counter() - t_all)
            if left <= 0:
                v.skipped += 1
                continue
            doc, secs, why = _child(script_cmd, [u], steps, left)
            if doc is None:
                v.trials.append(Trial(u, tried=False, reason=why, seconds=secs))
                continue
            hits = (doc.get("undo_hits") or [0])[0]
            t = Trial(u, results=_measure(doc, targets), hits=hits, seconds=secs)
            if not hits:
                t.tried, t.reason = False, "the re-run never reached this call"
            v.trials.append(t)
    v.seconds = time.perf_counter() - t_all
    if v.repeatable:
        _verify.decide(v, targets, named, diag, ())
    else:
        from .core.verification import TargetCheck

        for name, (tid, status, _) in targets.items():
            v.targets[name] = TargetCheck(name, status, "not_repeatable")
    done = sum(1 for t in v.trials if t.tried)
    print(f"gradscope: verification took {v.seconds:.1f} s ({done} re-run(s) with an undo"
          + (f", {v.skipped} not tried within the budget" if v.skipped else "") + ")", file=err, flush=True)
    return v
