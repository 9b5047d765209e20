"""The TraceIndex: everything the rules ask about one trace, built once from its TraceData: the facts
(:class:`~.facts.Facts`: labels, reachability, regions, lineage) and the one verdict
(:class:`~gradscope.verdict.VerdictRules`: who trains, what it got, who starved), and the verdicts on cuts as
data (:meth:`TraceIndex.verdicts`). It never writes into the trace; its only inputs after construction are the
live facts of tensors read now (``set_now``) and the user's names for them (``aliases``)."""
from __future__ import annotations

from ..core.model import Event
from ..verdict import VerdictRules
from .facts import Facts

HARMFUL = "harmful"
BENIGN = "benign"


def _sharded_param(info, ev) -> bool:
    """A parameter torch.distributed made (FSDP2's sharded form of a model's parameter, built from the original by
    FSDP's own ops): a leaf of the model's flow, not a value computed from the original."""
    p = info.producer if info is not None else None
    return p is not None and info.role == "param" and info.is_leaf and 0 <= p < len(ev) and \
        ev[p].context == "distributed"


class TraceIndex(Facts, VerdictRules):
    """Read-only queries over one TraceData; cached where they are costly."""

    def verdicts(self) -> dict:
        """{event index: "harmful" | "benign"} for every event that cuts or endangers gradient flow (a cut, an
        in-place write into a saved tensor, a requires_grad=False switch, a write through .data that corrupted
        a saved tensor), for the live facts set now."""
        if self._verdict_map is None:
            self._verdict_map = self._compute_verdicts()
        return self._verdict_map

    def cut_events(self) -> list:
        """The events that have a verdict, in order."""
        v = self.verdicts()
        return [e for e in self.ev if e.index in v]

    def _compute_verdicts(self) -> dict:
        ev = self.ev
        out: dict = {}
        roots = set()
        failed_inplace = self.d.exception is not None and "inplace" in (self.d.exception.message or "")
        for e in ev:
            if e.kind == "backward":
                roots.update(e.detail.roots or e.input_ids())
        reach = self.ancestors(list(roots)) if roots else set()
        # upstream leaves of each tensor, as bitsets over trainable/grad leaves; a cut is harmful when it
        # stood between a starved tensor (the one verdict: self.starved) and a backward root
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
                    if info is not None and (info.producer is None or _sharded_param(info, ev)) and info.is_leaf and (
                            r.requires_grad or info.role == "param"):
                        b = leaf_bit(r.tid)
                        if self.starved(r.tid):
                            starving |= b
                    bits[r.tid] = b
                acc |= b
            for l in e.detail.links or ():
                if isinstance(l, int) and 0 <= l < len(ev):
                    for r in ev[l].inputs:
                        acc |= bits.get(r.tid, 0)
            for o in e.output_ids():
                if (o not in bits or e.kind == "inplace") and not (
                        e.context == "distributed" and _sharded_param(self.d.tensors.get(o), ev)):
                    bits[o] = bits.get(o, 0) | acc
            if e.kind == "cut" and (e.context in ("user", "checkpoint", "compiled") or e.context == "library" and any(
                    self.consumers.get(o) for o in e.output_ids())):  # (torch's own cut, when the user used its result)
                if e.cut == "zero_grad_op":
                    out[e.index] = HARMFUL if (e.index in reach and acc & starving) or self._zero_harm(e) else BENIGN
                else:
                    down = e.index in reach or any(j in reach for j in self.value_users.get(e.index, ()))
                    out[e.index] = HARMFUL if down and (acc & starving) else BENIGN
            elif e.kind == "inplace" and e.detail.saved:
                out[e.index] = HARMFUL if failed_inplace else BENIGN
            elif e.kind == "requires_grad" and e.detail.value is False and e.context == "user":
                # (harmful only for a tensor the step trains: a freeze of what no optimizer holds is intended)
                t = e.input_ids()[0] if e.inputs else None
                out[e.index] = HARMFUL if (t is not None and self.trains(t) and self.consumers.get(t) and any(
                    i > e.index and i in reach for i in self.consumers[t])) else BENIGN
        for w, cut, _saver in self.corrupting_writes():
            out[w.index] = out[cut.index] = HARMFUL
        return out

    def _zero_harm(self, e: Event) -> bool:
        for b in self.d.backwards:
            for n in b.nodes.values():
                if n.event == e.index and n.ran and n.out_norms and all(v == 0.0 for v in n.out_norms if v is not None):
                    return True
        return False
