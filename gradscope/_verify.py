"""``Trace.verify``: from a recorded trace to the experiments (:mod:`gradscope.diagnosis.candidates`), their runs
(:mod:`gradscope._record._replay`) and a verdict per target (:class:`~gradscope.core.verification.TargetCheck`)."""
from __future__ import annotations

from .core.verification import FAILURE, TargetCheck, TargetResult, Verification, error_line, frame_key
from .diagnosis.candidates import CUT_CAUSES, candidates, cause_of_undo
from .diagnosis.common import statement_site
from .errors import UnknownTargetError

__all__ = ["verify", "undo_sites", "decide", "plan_for", "pairs"]

_BAD = ("none", "zero", "nonfinite")


def _targets(tr):
    """{name: (tid or None, status, is_param)}: the starved parameters (the summary's problems), the other leaves
    asked about or requiring grad that got no usable gradient, and the failure."""
    s = tr.summary()
    out = {}
    for row in s.params:
        if (row.status in _BAD or row.status == "frozen") and row.cause not in (None, "ok", "not_trained") and (
                row.trainable or row.status == "frozen"):
            out[row.name] = (row.tid, row.status, tr.data.tensors[row.tid].role == "param")
    diag = tr._diagnosis()
    for t in tr.data.tensors.values():
        if t.tid in {v[0] for v in out.values()} or not t.is_leaf or t.role == "param":
            continue
        if not (t.requires_grad or t.tid in diag.query_tids) or not (t.name or t.tid in diag.aliases):
            continue
        n = tr._now(t.tid)
        if n is not None and n["requires_grad"] and n["status"] in _BAD:
            out[t.name or diag.aliases[t.tid]] = (t.tid, n["status"], False)
    if s.failure is not None:
        out[FAILURE] = (None, "error", False)
    return out, s


def _causes(summary, targets, diag) -> dict:
    """target name -> (the cause the diagnosis named for it, its (file, line)): a parameter's from its row of the
    summary, another leaf's (a plain tensor that requires grad, which the summary does not count as a problem)
    from its own explanation."""
    def at(s):
        return (s.filename, s.lineno) if s is not None else None

    out = {}
    for row in summary.params:  # (each parameter's row holds its problem's cause and site; a frozen one's too)
        if row.cause:
            out[row.name] = (str(row.cause), at(row.site))
    if summary.failure is not None:
        out[FAILURE] = (str(summary.failure.cause), at(summary.failure.site))
    for name, (tid, _status, is_param) in targets.items():
        if name not in out and tid is not None and not is_param:
            exp = diag.why(tid)
            out[name] = (str(exp.cause), at(exp.site))
    return out


def undo_sites(diag, trials) -> dict:
    """Event index -> the Site an explanation shows for undoing it (a region: its opener)."""
    out = {}
    for t in trials:
        for u in (t.undo, t.also):
            if u is None or u.event in out:
                continue
            e = diag.ev[u.event]
            s = diag.region_site(e) if u.kind == "region" else e.site
            out[u.event] = statement_site(s)
    return out


def plan_for(tr, step_id, max_trials=24):
    """(targets, causes named, diagnosis, plan, skipped, the recorded flow) of a finished trace."""
    targets, summary = _targets(tr)
    diag = tr._diagnosis()
    named = _causes(summary, targets, diag)
    evidence = [e for p in list(summary.problems) + ([summary.failure] if summary.failure else []) for e in p.evidence]
    plan = candidates(diag, [v[0] for v in targets.values()], step_id, evidence) if targets else []
    return targets, named, diag, plan[:max_trials], max(0, len(plan) - max_trials), _signature(tr, step_id)


def verify(tr, step, args, kwargs, names_frame, *, budget_s=None, max_trials=24, pairs=True) -> Verification:
    from ._record._replay import State, run_pair, run_trials, step_identity
    from .trace import Trace

    with tr._paused():
        targets, summary = _targets(tr)
        diag = tr._diagnosis()
        named = _causes(summary, targets, diag)
        if not targets:
            return Verification()
        step_id = step_identity(step)
        evidence = [e for p in list(summary.problems) + ([summary.failure] if summary.failure else [])
                    for e in p.evidence]
        plan = candidates(diag, [v[0] for v in targets.values()], step_id, evidence)
        n_plan = len(plan)
        plan = plan[:max_trials]
        rec = tr._rec
        live = []
        switched = {r.tid for e in tr.data.events if e.kind == "requires_grad" for r in e.inputs}
        first_flags = {}  # (see State.first_flags)
        for tid, info in tr.data.tensors.items():
            if info.is_leaf and (info.role in ("param", "buffer") or info.requires_grad):
                t = rec.live(tid)
                if t is not None:
                    live.append(t)
                    if tid in switched:
                        first_flags[id(t)] = bool(info.requires_grad)
        state = State(live, [], list(rec.optim.seen), first_flags)
        originals = {name: rec.live(v[0]) if v[0] is not None else None for name, v in targets.items()}
        orig_sig = _signature(tr, step_id)

    from ._record import grad_status

    seen = {}  # target -> whether the traced re-run used the very tensor the recorded step did

    def untraced():  # (after the unmodified re-run: the undo re-runs need no trace when the targets are live)
        return bool(seen) and all(seen.get(n) for n in targets if n != FAILURE)

    import torch

    def starved(tensors, trained):
        """How many parameters the step trains (held by an optimizer that stepped; else every parameter that
        requires grad) ended the re-run without a gradient: a failure's undo that lets backward run but leaves
        them starved did not fix the step (it trains something else: a target network under no_grad)."""
        ps = [t for t in tensors if isinstance(t, torch.nn.Parameter) and t.is_leaf]
        if trained is not None:
            ps = [t for t in ps if id(t) in trained]
        return float(sum(1 for t in ps if t.requires_grad and t.grad is None))

    def measure(tr2, err):
        res = {}
        if FAILURE in targets and err is None:
            if tr2 is None:
                held = {id(p) for o, _ in state.optimizers for g in o.param_groups for p in g["params"]}
                res[STARVED] = TargetResult("count", starved((t for t, *_ in state.tensors), held or None))
            else:
                with tr2._paused():  # (from what its backward recorded: a step's own model may be gone by now)
                    d2, trained = tr2._diagnosis(), tr2._rec.optim.trained()
                    res[STARVED] = TargetResult("count", float(sum(
                        1 for tid, i in tr2.data.tensors.items() if i.role == "param" and i.is_leaf
                        and (tid in trained if trained else i.requires_grad) and d2.recorded_status(tid) == "none")))
        if tr2 is None:  # an untraced re-run: the live targets' own .grad
            for name in targets:
                if name == FAILURE:
                    res[name] = TargetResult("ok") if err is None else TargetResult(
                        "error", error=error_line(err))
                else:
                    st, nm = grad_status(originals[name].grad)
                    res[name] = TargetResult(st, nm)
            return res
        with tr2._paused():
            for name, (tid, status, _) in targets.items():
                if name == FAILURE:
                    res[name] = TargetResult("ok") if err is None else TargetResult(
                        "error", error=error_line(err))
                    continue
                tid2 = None
                t = originals.get(name)
                if t is not None:
                    tid2 = tr2._rec.tensor_id(t)
                seen[name] = tid2 is not None
                if tid2 is None:
                    try:
                        tid2 = tr2.resolve(name)
                    except UnknownTargetError:
                        res[name] = TargetResult("missing")
                        continue
                now = tr2._now(tid2)
                if now is None:
                    st = tr2._diagnosis().recorded_status(tid2)
                    res[name] = TargetResult(st)
                else:
                    res[name] = TargetResult(now["status"], now["norm"])
        return res

    def make_trace():
        return Trace(**tr._opts)

    def signature(tr2):
        with tr2._paused():
            return _signature(tr2, step_id)

    prepare = {u.event: _unfreezer(tr, diag.ev[u.event]) for u, r in plan if u.kind == "requires_grad" and r is None}
    v = run_trials(make_trace, step, args, kwargs, plan, state, names_frame, measure, signature,
                   budget_s=budget_s, pairs=pairs, prepare=prepare, untraced=untraced)
    v.skipped += n_plan - len(plan)
    sites = decide(v, targets, named, diag, orig_sig)
    if not v.repeatable:
        return v
    if pairs:
        _pairs(v, targets, make_trace, step, args, kwargs, state, names_frame, measure, sites,
               lambda *a: run_pair(*a, untraced=untraced()), diag, prepare)
    return v


def _unfreezer(tr, e):
    """What undoing freeze ``e`` starts from: the tensors it froze (that required grad when it ran) requiring grad."""
    ts = [tr._rec.live(r.tid) for r in e.inputs if r.requires_grad]

    def unfreeze():
        for t in ts:
            if t is not None and t.is_leaf and not t.requires_grad:
                t.requires_grad_(True)
    return unfreeze


def decide(v, targets, named, diag, orig_sig) -> dict:
    """Fill ``v.targets`` from the trials: whether the unmodified re-run repeated the recorded step (its flow,
    ``orig_sig``, and each target's status), then per target the first undo that restored it. Returns the undo
    sites (event index -> Site)."""
    base = v.baseline
    unrepeated = {}
    for name, (tid, status, _) in targets.items():
        r = base.get(name)
        if r is None or (r.status != _as_run(status) if name != FAILURE else r.status == "ok"):
            got = "backward succeeded" if r is not None and r.status == "ok" else (r.status if r else "missing")
            unrepeated[name] = f"the unmodified re-run gave {name} {got!s}, the recorded step {status}"
    if unrepeated and len(unrepeated) == len(targets):
        v.repeatable = False
        v.reason = next(iter(unrepeated.values()))
    if v.repeatable and not _contains(orig_sig, v.base_signature):
        v.repeatable = False
        v.reason = _first_difference(orig_sig, v.base_signature)
    if not v.repeatable:
        for name, (tid, status, _) in targets.items():
            v.targets[name] = TargetCheck(name, status, "not_repeatable")
        return {}
    sites = undo_sites(diag, v.trials)
    for name, (tid, status, is_param) in targets.items():
        if name in unrepeated:  # (this target alone did not repeat: nothing is claimed for it)
            v.targets[name] = TargetCheck(name, status, "not_repeatable", untried=[(None, unrepeated[name])])
            continue
        tried = [t for t in v.trials if t.tried and t.also is None]
        good = [t for t in tried if t.restored(name) and (name != FAILURE or _starved(t) in (0.0, float("inf")))]
        c = TargetCheck(name, status, "no_single_undo" if tried else "not_verified",
                        refuted=[t.undo for t in tried if t not in good],
                        untried=[(t.undo, t.reason) for t in v.trials if not t.tried], tried=len(tried))
        cause, where = named.get(name, (None, None))
        if cause not in CUT_CAUSES:
            # the diagnosis named no cut (an unused parameter, a hook, a custom Function, a NaN): an undo that changes
            # the outcome opens another way in, it does not test that explanation
            c.verdict, c.cause = "not_a_cut", cause or ""
            v.targets[name] = c
            continue
        if good:  # (the diagnosis' own line first, when its undo is among those that restored it)
            if name == FAILURE and len(good) > 1:  # several let backward run: the one that starves fewest parameters
                least = min(_starved(t) for t in good)
                good = [t for t in good if _starved(t) == least]
            t = next((t for t in good if (t.undo.filename, t.undo.lineno) == where), good[0])
            c.others = [g.undo for g in good if g is not t]
            c.verdict, c.undo, c.result = "verified", t.undo, t.results.get(name)
            c.site, c.cause = sites.get(t.undo.event), cause_of_undo(t.undo, is_param)
        v.targets[name] = c
    return sites


def pairs(v, targets, sites, run_pair, diag):
    """:func:`_pairs` for a re-run that is not a call in this process (``gradscope run``'s subprocesses):
    ``run_pair(None, None, (), {}, a, b, None, None, None, None) -> Trial``."""
    _pairs(v, targets, None, None, (), {}, None, None, None, sites, run_pair, diag)


def _pairs(v, targets, make_trace, step, args, kwargs, state, names_frame, measure, sites, run_pair, diag,
           prepare=None, max_pairs=10):
    """Targets no single undo restored: try the undos two at a time (the first few), once per pair for all."""
    open_ = [n for n, c in v.targets.items() if c.verdict == "no_single_undo"]
    cands = v.pair_candidates[:5]
    if not open_ or len(cands) < 2:
        return
    n = 0
    for i in range(len(cands)):
        for j in range(i + 1, len(cands)):
            if n >= max_pairs or not open_:
                return
            n += 1
            t = run_pair(make_trace, step, args, kwargs, cands[i], cands[j], state, names_frame, measure, prepare)
            v.trials.append(t)
            sites.update(undo_sites(diag, [t]))
            for name in list(open_):
                if t.restored(name):
                    c = v.targets[name]
                    c.verdict, c.undo, c.also, c.result = "verified", t.undo, t.also, t.results.get(name)
                    c.site, c.cause = sites.get(t.undo.event), cause_of_undo(t.undo, targets[name][2])
                    open_.remove(name)


STARVED = "<starved>"  # (a measurement, not a target: parameters requiring grad left without one)


def _starved(t) -> float:
    r = t.results.get(STARVED)
    return r.norm if r is not None and r.norm is not None else float("inf")


def _as_run(status):
    """A frozen parameter's gradient, as a re-run measures it (none)."""
    return "none" if status == "frozen" else status


def _signature(tr, step_id) -> tuple:
    """The step's flow: (kind, op, frames from the step inward) of each of the user's events."""
    out = []
    for e in tr.data.events:
        if e.context != "user" or e.site is None or e.kind in ("exception", "grad_read"):
            continue
        # (a module call's or a module attribute's op is its path, named at stop: only calls' ops are compared)
        op = e.op if e.kind in ("op", "cut", "inplace", "backward") else ""
        out.append((str(e.kind), op, frame_key(e.site.stack or (e.site.frame(),), step_id)))
    return tuple(out)


def _contains(orig, base) -> bool:
    """``base`` (the re-run's flow) is the recorded flow, or a stretch of it (the recorded block ran more than
    the step)."""
    if orig == base:
        return True
    n = len(base)
    if n == 0 or n > len(orig):
        return n == 0 and not orig
    for i in range(len(orig) - n + 1):
        if orig[i] == base[0] and orig[i:i + n] == base:
            return True
    return False


def _first_difference(orig, base) -> str:
    for i, (a, b) in enumerate(zip(orig, base)):
        if a != b:
            where = f"{b[2][-1][0].rsplit('/', 1)[-1]}:{b[2][-1][1]}" if b[2] else "?"
            return f"its call {i + 1} was {b[1]} at {where}, the recorded one {a[1]}"
    return f"the re-run made {len(base)} calls, the recorded step {len(orig)}"
