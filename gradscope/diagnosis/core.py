"""The Diagnosis: answers `why(tensor)`, `failure()`, `cuts()` and `summarize()` over one trace by running
the registered rules (:mod:`.registry`) on the facts (:mod:`.facts`)."""
from __future__ import annotations

from ..explanation import Explanation, ParamStatus, StepSummary
from ..model import Event
from ..verdict import VerdictRules
from .common import CUT_CAUSE, _FLOW_CAUSES, statement_site
from .cuts import CutsMixin
from .errors import explain_failure
from .facts import FactsMixin
from .registry import Query, REGISTRY
from .rules_none import NoneMixin
from .rules_received import ReceivedMixin
from .rules_unused import UnusedMixin
from .rules_zero import ZeroMixin
from .wording import WordingMixin, _as_written, _at, _code


class Diagnosis(FactsMixin, WordingMixin, CutsMixin, ReceivedMixin, ZeroMixin, NoneMixin, UnusedMixin, VerdictRules):
    """Explanations over one TraceData. Build once per trace state; queries are cached."""

    # --- public: why ----------------------------------------------------------------------------
    def why(self, tid, now=None) -> Explanation:
        self.query_tids.add(tid)
        d = self.d
        info = d.tensors[tid]
        name = self.label(tid)
        g = info.grad
        if now is not None:
            status = now["status"]
            requires_grad = now["requires_grad"]
            is_leaf = now["is_leaf"]
            retains = now["retains_grad"]
        else:
            status = self.recorded_status(tid)
            requires_grad = info.requires_grad
            is_leaf = info.is_leaf
            retains = info.retains_grad
            for e in self.ev:
                if e.kind == "requires_grad" and e.detail.get("value") is not None and tid in e.input_ids():
                    requires_grad = e.detail["value"]
        norm = (now or {}).get("norm") if now else (g.norm if g else None)
        if now is not None:
            self.set_now({**self.now, tid: now})
        q = Query(tid, name, requires_grad, is_leaf, retains, status=status, norm=norm)
        used = self.cleared_after_use(tid) if status in ("none", "zero") else None
        if used is not None:  # backward filled it, its consumers read it, then it was cleared: as it should be
            q.memo["cleared"], q.memo["cleared_status"] = used, status
            status = q.status = "received"
        exp = REGISTRY.first(status if status in ("received", "nonfinite", "zero") else "none", self, q)
        if status != "received" and requires_grad and info.role == "param" and not self.trains(tid):
            decided = exp.rule
            exp = self._not_trained(tid, name, exp, status)
            exp.rule = decided
        exp.target = exp.target or name
        exp.status = "received" if status == "received" else status
        if status in ("none", "zero") and exp.cause in _FLOW_CAUSES:
            self._name_other_cuts(tid, exp)
        exp.site = statement_site(exp.site)
        also = (d.meta.get("tied_params") or {}).get(str(tid))
        if also and status != "received":  # the same Parameter under another name (tied weights)
            exp.summary += f" ({', '.join(f'`{a}`' for a in also[:3])} is the same Parameter: the weights are tied.)"
        return exp

    def _name_other_cuts(self, tid, exp):
        """Every other cut on the way from ``tid`` to a backward root (a comparison on one path, a detach on
        another): named after the main one, in the order they ran, as extra sites."""
        roots = set()
        for e in self._backward_events():
            if e.op != "torch.autograd.grad":
                roots.update(e.detail.get("roots") or e.input_ids())
        if not roots:
            return
        anc = self.ancestors(list(roots))
        have = {e.index for e in exp.evidence if isinstance(e, Event)}
        seen = {(exp.site.filename, exp.site.lineno)} if exp.site else set()
        extra = []
        for e in self.cone(tid):
            if e.kind != "cut" or e.cut == "zero_grad_op" or e.context != "user" or e.index in have or e.site is None:
                continue
            if not any(r.requires_grad for r in e.inputs):
                continue
            down = e.index in anc or any(j in anc for j in self.value_users.get(e.index, ()))
            site = statement_site(self._region_site(e) if e.cut in ("no_grad", "inference_mode") else e.site)
            if not down or (site.filename, site.lineno) in seen:
                continue
            seen.add((site.filename, site.lineno))
            extra.append((e, site))
        if not extra:
            return
        exp.extra_sites.extend(site for _, site in extra)
        exp.evidence.extend(e for e, _ in extra)
        named = "; ".join(f"{_as_written(e)}{_at(site)}{_code(site)} ({CUT_CAUSE.get(e.cut, e.cut)})"
                          for e, site in extra[:4])
        exp.summary += (f" It is also cut on {'another path' if len(extra) == 1 else f'{len(extra)} other paths'}: "
                        f"{named}" + ("; …" if len(extra) > 4 else "") + ".")
        exp.fix += " Fix each of the other cuts as well, or the gradient stays cut on those paths."

    # --- failure ---------------------------------------------------------------------------------
    def failure(self) -> Explanation | None:
        """Why the traced step raised: the error table's rule for the message (:mod:`.errors`)."""
        return explain_failure(self)

    # --- cuts and the step summary -------------------------------------------------------------------
    def cuts(self, now=None) -> list:
        """Events that cut or endanger gradient flow, with verdicts."""
        if now is not None:
            self.set_now(now)
        if not self._verdicts_done:
            self._verdicts()
        return [e for e in self.ev if e.verdict]

    def _verdicts(self):
        self._verdicts_done = True
        ev = self.ev
        roots = set()
        failed_inplace = self.d.exception is not None and "inplace" in (self.d.exception.message or "")
        for e in ev:
            if e.kind == "backward":
                roots.update(e.detail.get("roots") or e.input_ids())
        reach = self.ancestors(list(roots)) if roots else set()
        # upstream leaves of each tensor, as bitsets over trainable/grad leaves; a cut is harmful when it
        # stood between a starved tensor (the one verdict: self.starved) and a backward root
        for e in ev:
            e.verdict = None
        bits: dict = {}
        leaf_index: dict = {}

        def leaf_bit(tid):
            b = leaf_index.get(tid)
            if b is None:
                b = leaf_index[tid] = 1 << len(leaf_index)
            return b

        starving = 0
        for e in ev:
            acc = 0
            for r in e.inputs:
                b = bits.get(r.tid)
                if b is None:
                    info = self.d.tensors.get(r.tid)
                    b = 0
                    if info is not None and info.producer is None and info.is_leaf and (
                            r.requires_grad or info.role == "param"):
                        b = leaf_bit(r.tid)
                        if self.starved(r.tid):
                            starving |= b
                    bits[r.tid] = b
                acc |= b
            for l in e.detail.get("links", ()) if e.detail else ():
                if isinstance(l, int) and 0 <= l < len(ev):
                    for r in ev[l].inputs:
                        acc |= bits.get(r.tid, 0)
            for o in e.output_ids():
                if o not in bits or e.kind == "inplace":
                    bits[o] = bits.get(o, 0) | acc
            if e.kind == "cut" and (e.context in ("user", "checkpoint", "compiled") or e.context == "library" and any(
                    self.consumers.get(o) for o in e.output_ids())):  # (torch's own cut, when the user used its result)
                if e.cut == "zero_grad_op":
                    e.verdict = "harmful" if (e.index in reach and acc & starving) or self._zero_harm(e) else "benign"
                else:
                    down = e.index in reach or any(j in reach for j in self.value_users.get(e.index, ()))
                    e.verdict = "harmful" if down and (acc & starving) else "benign"
            elif e.kind == "inplace" and e.detail.get("saved"):
                e.verdict = "harmful" if failed_inplace else "benign"
            elif e.kind == "requires_grad" and e.detail.get("value") is False and e.context == "user":
                t = e.input_ids()[0] if e.inputs else None
                e.verdict = "harmful" if (t is not None and self.consumers.get(t) and any(
                    i > e.index and i in reach for i in self.consumers[t])) else "benign"
        self._mark_corrupting()

    def _mark_corrupting(self):
        for w, cut, _saver in self._corrupting_writes():
            w.verdict = cut.verdict = "harmful"

    def _zero_harm(self, e):
        for b in self.d.backwards:
            for n in b.nodes.values():
                if n.event == e.index and n.ran and n.out_norms and all(v == 0.0 for v in n.out_norms if v is not None):
                    return True
        return False

    def summarize(self, now=None) -> StepSummary:
        now = now or {}
        self.set_now(now)
        d = self.d
        s = StepSummary()
        s.n_events = len(self.ev)
        s.n_ops = sum(1 for e in self.ev if e.kind in ("op", "cut", "inplace") and e.context == "user")
        bws = self._backward_events()
        s.n_backward = len(bws)
        s.backward_roots = [self._root_label(b) for b in bws]
        s.n_optimizer_steps = sum(1 for e in self.ev if e.kind == "optimizer_step")
        s.unseen = list(d.unseen)
        cuts = self.cuts()
        seen_cut = set()
        s.harmful_cuts = []
        for e in cuts:  # the same line in every training step is one cut
            if e.verdict == "harmful":
                key = e.site.short if e.site else (e.cut or e.kind, e.op)  # one row per source line
                if key not in seen_cut:
                    seen_cut.add(key)
                    s.harmful_cuts.append(e)
        s.benign_cuts = [e for e in cuts if e.verdict == "benign"]
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
                # leaves the user made with requires_grad=True and used count too (x = torch.randn(..., requires_grad=True))
                if not (t.is_leaf and t.requires_grad and t.tid in used
                        and t.tid not in self.trainable and not trainable):
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
                        rg = bool(e.detail.get("value"))
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
                exp = self.why(t.tid, n)
                if "the backward that should have reached it failed" in exp.summary:  # covered by the failure
                    ps.cause, ps.site = exp.cause, exp.site
                    s.params.append(ps)
                    continue
                ps.cause, ps.site = exp.cause, exp.site
                key = (exp.cause, exp.site.short if exp.site else None, exp.status)
                if key in groups:
                    groups[key].append(exp)
                else:
                    groups[key] = [exp]
                    problems.append(exp)
            elif not rg and t.tid in used:
                exp = self.why(t.tid, n)
                ps.cause, ps.site = exp.cause, exp.site
            s.params.append(ps)
        # merge grouped explanations: one panel per cause+site, listing every target
        merged = []
        for exp in problems:
            key = (exp.cause, exp.site.short if exp.site else None, exp.status)
            grp = groups[key]
            if len(grp) > 1:
                names = [g.target for g in grp]
                shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
                exp = Explanation(exp.cause, exp.site, shown,
                                  exp.summary.replace(f"{exp.target}.grad is", f"{shown}: .grad is", 1)
                                  if exp.summary.startswith(exp.target) else exp.summary,
                                  exp.detail, exp.fix, exp.path, exp.evidence, exp.status)
            merged.append(exp)
        s.problems = merged
        s.failure = self.failure()
        if not bws and not s.failure:
            s.verdict = "no backward ran in the traced block: nothing to check yet"
            s.ok = True
        elif s.failure is not None or merged:
            n = len(merged) + (1 if s.failure else 0)
            s.verdict = f"{n} problem{'s' if n != 1 else ''} found"
            s.ok = False
        else:
            s.verdict = "OK: every trainable parameter used in the step got a finite, non-zero gradient"
            s.ok = True
        return s
