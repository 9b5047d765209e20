"""The Diagnosis: answers `why(tensor)`, `failure()`, `cuts()` and `summarize()` over one trace in stages:
the registered rules (:mod:`.registry`) ask the :class:`~.index.TraceIndex` and return a
:class:`~.finding.Finding` (data); the passes here add to findings (a parameter the step does not train, further
cuts on other paths, tied weights, one finding for several targets) without touching text; the wording
(:mod:`.wording`) makes the public Explanation from each finding at the end."""
from __future__ import annotations

from ..core.explanation import Explanation, ParamStatus, StepSummary
from ..core.model import Cause, Event
from .common import CUT_CAUSE, _FLOW_CAUSES, statement_site, users_site
from .errors import failure_finding
from .finding import Finding, found
from .index import HARMFUL, BENIGN, TraceIndex
from .registry import Query, REGISTRY
from . import cuts, rules_unused, rules_zero
from . import rules_none, rules_received  # noqa: F401  (register the rules)
from .wording import explain


class Diagnosis(TraceIndex):
    """Explanations over one TraceData. Build once per trace state; queries are cached."""

    # --- why --------------------------------------------------------------------------------------
    def why(self, tid, now=None) -> Explanation:
        """Why ``tid``'s .grad is what it is (``now``: its live facts, read now)."""
        return explain(self.why_finding(tid, now))

    def why_finding(self, tid, now=None) -> Finding:
        self.query_tids.add(tid)
        d = self.d
        info = d.tensors[tid]
        name = self.label(tid)
        g = info.grad
        # requires_grad as the step left it (as first seen, then the step's own writes): a freeze or unfreeze after
        # the trace, read live, is not what happened in the step it explains
        requires_grad = self.requires_grad_now(tid)
        if now is not None:
            status = now["status"]
            is_leaf = now["is_leaf"]
            retains = now["retains_grad"]
        else:
            status = self.recorded_status(tid)
            is_leaf = info.is_leaf
            retains = info.retains_grad
        norm = (now or {}).get("norm") if now else (g.norm if g else None)
        if now is not None:
            self.set_now({**self.now, tid: now})
        q = Query(tid, name, requires_grad, is_leaf, retains, status=status, norm=norm)
        used = self.cleared_after_use(tid) if status in ("none", "zero") else None
        if used is not None:  # backward filled it, its consumers read it, then it was cleared: as it should be
            q.memo["cleared"], q.memo["cleared_status"] = used, status
            status = q.status = "received"
        f = REGISTRY.first(status if status in ("received", "nonfinite", "zero") else "none", self, q)
        if status != "received" and requires_grad and info.role == "param" and not self.trains(tid):
            decided = f.rule
            f = self.not_trained(tid, name, f, status)
            f.rule = decided
        f.target = f.target or name
        f.status = "received" if status == "received" else status
        if status in ("none", "zero") and f.cause in _FLOW_CAUSES:
            self.name_other_cuts(tid, f)
        f.site = statement_site(users_site(f.site, self.file_label))  # (a library's line: the user's call of it)
        also = (d.meta.get("tied_params") or {}).get(str(tid))
        if also and status != "received":  # the same Parameter under another name (tied weights)
            f.tied = tuple(also)
        return f

    # --- findings several rules share (the rules ask the diagnosis; they never import each other) ------------
    def custom_output_cut(self, path):
        """A custom autograd.Function on ``path`` that made no graph: see :func:`.cuts.custom_output_cut`."""
        return cuts.custom_output_cut(self, path)

    def find_data_cut(self, tid, name, real) -> Finding | None:
        """The cut on the data path from ``tid`` to the roots of the backward calls ``real`` (:mod:`.cuts`)."""
        return cuts.find_data_cut(self, tid, name, real)

    def cut_finding(self, tid, name, cause, se, e, path, k, root, returned=True) -> Finding:
        """The finding of one cut (``e``; ``se``: where its cause shows) on the way to ``root`` (:mod:`.cuts`)."""
        return cuts.cut_finding(self, tid, name, cause, se, e, path, k, root, returned)

    def timing_finding(self, tid, name, e, read) -> Finding:
        """.grad cleared by ``e`` after backward and read cleared by ``read`` (:mod:`.rules_zero`)."""
        return rules_zero.timing_finding(self, tid, name, e, read)

    def replaced_finding(self, tid, name) -> Finding | None:
        """param_recreated when ``tid`` (or the module holding it) was replaced (:mod:`.rules_unused`)."""
        return rules_unused.replaced_finding(self, tid, name)

    # --- the passes over a finding ------------------------------------------------------------------
    def not_trained(self, tid, name, inner: Finding, status) -> Finding:
        """A parameter the step does not train (no optimizer holds it; only used under no_grad or not used):
        a target network, an EMA teacher, a model being evaluated. Not a problem: say so, with the reason
        (``inner``: what the rules found)."""
        uses = [e for e in self.events_on(tid) if e.kind in ("op", "cut", "module") and e.context == "user"]
        grad_uses = [e for e in uses if e.grad_enabled]
        first = None
        if uses and not grad_uses:
            use = "no_grad"
            first = inner.site or uses[0].site  # (the user's call line, when the finding has it)
        elif not uses:
            use = "unused"
        else:
            use = "grad"
        return found(Cause.NOT_TRAINED, inner.site, name, "not_trained", name, status, bool(self.trainable), use, first,
                     inner, path=inner.path, evidence=inner.evidence)

    def name_other_cuts(self, tid, f: Finding) -> None:
        """Every other cut on the way from ``tid`` to a backward root (a comparison on one path, a detach on
        another): added to the finding after the main one, in the order they ran, as extra sites."""
        roots = set()
        for e in self.backward_events():
            if e.op != "torch.autograd.grad":
                roots.update(e.detail.roots or e.input_ids())
        if not roots:
            return
        anc = self.ancestors(list(roots))
        have = {e.index for e in f.evidence if isinstance(e, Event)}
        seen = {(f.site.filename, f.site.lineno)} if f.site else set()
        extra = []
        for e in self.cone(tid):
            if e.kind != "cut" or e.cut == "zero_grad_op" or e.context != "user" or e.index in have or e.site is None:
                continue
            if not any(r.requires_grad for r in e.inputs) or self.feeds_loss_target(e):
                continue  # (a loss's detached target is the usual idiom, not a cut to fix)
            down = e.index in anc or any(j in anc for j in self.value_users.get(e.index, ()))
            site = statement_site(self.region_site(e) if e.cut in ("no_grad", "inference_mode") else e.site)
            if not down or (site.filename, site.lineno) in seen:
                continue
            seen.add((site.filename, site.lineno))
            extra.append((e, site))
        if not extra:
            return
        f.extra_sites.extend(site for _, site in extra)
        f.evidence.extend(e for e, _ in extra)
        f.other_cuts = extra

    # --- failure ---------------------------------------------------------------------------------
    def failure(self) -> Explanation | None:
        """Why the traced step raised: the error table's rule for the message (:mod:`.errors`)."""
        f = self.failure_finding()
        return explain(f) if f is not None else None

    def failure_finding(self) -> Finding | None:
        return failure_finding(self)

    # --- cuts and the step summary -------------------------------------------------------------------
    def cuts(self, now=None) -> list:
        """Events that cut or endanger gradient flow (their verdicts: :meth:`verdicts`)."""
        if now is not None:
            self.set_now(now)
        return self.cut_events()

    def summarize(self, now=None) -> StepSummary:
        now = now or {}
        self.set_now(now)
        d = self.d
        s = StepSummary()
        s.n_events = len(self.ev)
        s.n_ops = sum(1 for e in self.ev if e.kind in ("op", "cut", "inplace") and e.context == "user")
        bws = self.backward_events()
        s.n_backward = len(bws)
        s.backward_roots = [self.root_label(b) for b in bws]
        s.n_optimizer_steps = sum(1 for e in self.ev if e.kind == "optimizer_step")
        s.unseen = list(d.unseen)
        cuts = self.cuts()
        verdicts = self.verdicts()
        s.cut_verdicts = dict(verdicts)
        seen_cut = set()
        s.harmful_cuts = []
        for e in cuts:  # the same line in every training step is one cut
            if verdicts[e.index] == HARMFUL:
                key = e.site.short if e.site else (e.cut or e.kind, e.op)  # one row per source line
                if key not in seen_cut:
                    seen_cut.add(key)
                    s.harmful_cuts.append(e)
        s.benign_cuts = [e for e in cuts if verdicts[e.index] == BENIGN]
        used = set()
        for e in self.ev:
            if e.context == "user" and e.kind in ("op", "cut", "inplace", "module"):
                used.update(e.input_ids())
        trainable = self.trainable
        problems = []
        groups = {}
        for t in d.tensors.values():
            if self.out_of_model(t.tid):  # only copied or built, then replaced: not in the model
                continue
            if t.role != "param":
                # leaves the user made with requires_grad=True and used count too (x = torch.randn(..., requires_grad=True)):
                # when no optimizer is known, or when one holds them (SAC's log_alpha)
                if not (t.is_leaf and t.requires_grad and t.tid in used and (not trainable or t.tid in trainable)):
                    continue
            n = now.get(t.tid)
            if n is not None:
                status, norm, rg = n["status"], n["norm"], n["requires_grad"]
            else:
                status = t.grad.status if t.grad else "none"
                norm = t.grad.norm if t.grad else None
                rg = t.requires_grad
                for e in self.ev:
                    if e.kind == "requires_grad" and t.tid in e.input_ids():
                        rg = bool(e.detail.value)
            is_trainable = (t.tid in trainable) if trainable else rg
            if status in ("none", "zero") and self.grad_status(t.tid) == "received":  # consumed, then cleared
                status = "received"
                norm = t.grad.norm if t.grad else norm
            shown = status
            if not rg:
                shown = "frozen"
            elif not bws:
                shown = "not_run"
            ps = ParamStatus(self.label(t.tid), t.tid, t.shape, shown, norm, is_trainable)
            bad = self.starved(t.tid)  # the one verdict (the cuts use it too)
            if not rg and trainable and t.tid in trainable and t.tid in used:
                bad = True  # handed to an optimizer, used in the forward, but frozen
            if bad and bws:
                f = self.why_finding(t.tid, n)
                ps.cause, ps.site = f.cause, f.site
                if covered_by_failure(f):  # the failure's own panel explains it
                    s.params.append(ps)
                    continue
                key = (f.cause, f.site.short if f.site else None, f.status)
                if key in groups:
                    groups[key].append(f)
                else:
                    groups[key] = [f]
                    problems.append(f)
            elif not rg and t.tid in used:
                f = self.why_finding(t.tid, n)
                ps.cause, ps.site = f.cause, f.site
            elif status == "zero" and rg and self.cancelled(t.tid) is not None:  # the loss's own zero: said so
                f = self.why_finding(t.tid, n)
                ps.cause, ps.site = f.cause, f.site
            s.params.append(ps)
        # one panel per cause+site, listing every target
        for f in problems:
            grp = groups[(f.cause, f.site.short if f.site else None, f.status)]
            if len(grp) > 1:
                f.group = [g.target for g in grp]
        s.harmful_cuts = _named_cut_per_line(s.harmful_cuts, cuts, verdicts, problems)
        s.problems = [explain(f) for f in problems]
        s.failure = self.failure()
        if not bws and not s.failure:
            s.verdict = "no backward ran in the traced block: nothing to check yet"
            s.ok = True
        elif s.failure is not None or problems:
            n = len(problems) + (1 if s.failure else 0)
            s.verdict = f"{n} problem{'s' if n != 1 else ''} found"
            s.ok = False
        else:
            s.verdict = "OK: every trainable parameter used in the step got a finite, non-zero gradient"
            s.ok = True
        return s


def _named_cut_per_line(rows, cuts, verdicts, problems) -> list:
    """One harmful cut per source line, and on a line with several (`h.detach().numpy()`) the one whose cause a
    problem names there (the round trip, not the detach it needed)."""
    named = {(f.site.filename, f.site.lineno): str(f.cause) for f in problems if f.site is not None}
    if not named:
        return rows
    out = []
    for e in rows:
        want = named.get((e.site.filename, e.site.lineno)) if e.site is not None else None
        if want is not None and str(CUT_CAUSE.get(str(e.cut), "")) != want:
            at = (e.site.filename, e.site.lineno)
            e = next((c for c in cuts if verdicts.get(c.index) == HARMFUL and c.site is not None
                      and (c.site.filename, c.site.lineno) == at and str(CUT_CAUSE.get(str(c.cut), "")) == want), e)
        out.append(e)
    return out


def covered_by_failure(f: Finding) -> bool:
    """The finding says that the backward that should have reached it failed (the failure explains it)."""
    if f.wording == "backward_failed":
        return True
    return f.wording == "not_trained" and f.facts["use"] == "grad" and covered_by_failure(f.facts["inner"])
