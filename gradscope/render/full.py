"""The complete diagram of every user event of a step (:class:`_Full`), before focus,
folding, collapsing and truncation; and the graph walks over it."""
from __future__ import annotations

import textwrap
from collections import deque
from dataclasses import dataclass
from typing import Iterable

from ..core.model import Event, TraceData
from .labels import (_NODE_KINDS, _SHAPE_ONLY_OPS, _STATUS_TEXT, _fmt_norm, _fmt_shape, _module_parent, _op_title,
                     _param_status, _short_code, cut_label, op_short)


@dataclass(slots=True)
class _N:
    key: tuple
    kind: str
    title: str
    lines: list
    style: str
    order: int
    module: str | None = None
    event: int | None = None
    tid: int | None = None
    nograd: bool = False
    region: str = ""  # "no_grad @ t.py:3" for grad-disabled ops
    n_ops: int = 0
    mark: str = ""
    pprefix: str = ""  # parameters: what precedes the module path in the name (a root's name)
    pleaf: str = ""  # parameters: what follows it ("weight")
    norm: float | None = None  # parameters: the gradient's norm
    outside: bool = False  # ops: run by the user's code outside every module call (data loading)


def _param_home(name: str, consumer: str | None) -> tuple:
    """(module path, prefix, leaf) of a parameter called ``name``, first read by an op in module
    ``consumer``: the module is the consumer's when the name runs through it (``model.fc1.weight``
    read in ``fc1``: ``("fc1", "model.", "weight")``, whatever root prefix the name carries),
    else the name's own parent."""
    if consumer:
        if name.startswith(consumer + "."):
            return consumer, "", name[len(consumer) + 1:]
        at = name.find("." + consumer + ".")
        if at >= 0:
            return consumer, name[:at + 1], name[at + len(consumer) + 2:]
    parent = _module_parent(name)
    return parent, "", name[len(parent) + 1:] if parent else name


@dataclass(slots=True)
class _E:
    src: tuple
    dst: tuple
    kind: str
    label: str = ""
    tid: int | None = None


_EDGE_RANK = {"raised": 7, "cut": 6, "inferred": 5, "root": 4, "autograd": 3, "benign_cut": 2, "data": 1, "order": 0}


class _Full:
    """The complete diagram of every user event, before focus/collapse/truncation."""

    def __init__(self, data: TraceData, summary, lo: int = 0) -> None:
        self.lo = lo  # first event drawn (the last training step by default)
        self.data = data
        self.summary = summary
        self.nodes: dict = {}  # key -> _N, insertion order = creation order
        self.edges: list = []
        self.roots: list = []  # root node keys
        self.module_types: dict = {}
        self.status_by_tid: dict = {}
        self.harmful: set = set()
        self.benign: set = set()
        self.verdicts: dict = {}  # event index -> "harmful" | "benign" (the diagnosis'; else the loaded trace's)
        self.evidence: set = set()
        self._order = 0
        self.after_backward = bool(data.backwards) or any(e.kind == "backward" for e in data.events)
        if summary is not None:
            self.status_by_tid = {p.tid: p for p in summary.params}
            self.harmful = {e.index for e in summary.harmful_cuts}
            self.benign = {e.index for e in summary.benign_cuts}
            self.verdicts = summary.cut_verdicts
            exps = list(summary.problems) + ([summary.failure] if summary.failure is not None else [])
            for x in exps:
                for ev in x.evidence:
                    if isinstance(ev, Event):
                        self.evidence.add(ev.index)
        self._build()

    # --- helpers ------------------------------------------------------------------------
    def _add(self, key: tuple, **kw) -> _N:
        n = self.nodes.get(key)
        if n is None:
            n = _N(key=key, order=self._order, **kw)
            self._order += 1
            self.nodes[key] = n
        return n

    def _verdict(self, e: Event) -> str | None:
        v = self.verdicts.get(e.index) if self.summary is not None else e.verdict
        if e.index in self.harmful or v == "harmful":
            return "harmful"
        if e.index in self.benign or v == "benign":
            return "benign"
        return None

    def _tensor_node(self, tid: int, consumer: str | None = None) -> tuple | None:
        """The node for a tensor nobody in the drawing produced (a parameter or an input);
        ``consumer``: the module of the op that reads it first."""
        key = ("t", tid)
        if key in self.nodes:
            return key
        t = self.data.tensors.get(tid)
        if t is None:
            self._add(key, kind="tensor", title=f"t{tid}", lines=[], style="input", tid=tid)
            return key
        if t.role == "buffer":
            return None
        shape = f"{_fmt_shape(t.shape)} {t.dtype}"
        if t.role == "param":
            status, norm, _cause = _param_status(t, self.status_by_tid, self.after_backward)
            lines = [shape]
            if status is not None:
                st = _STATUS_TEXT.get(status, status)
                if status == "received" and norm is not None:
                    st += f" |g|={_fmt_norm(norm)}"
                lines.append(st)
            style = (f"param_{status}" if status in ("received", "none", "zero", "nonfinite", "frozen", "untrained")
                     else "param_received" if status == "cancelled" else "param")
            module, prefix, leaf = _param_home(t.name or "", consumer)
            self._add(key, kind="param", title=t.label(), lines=lines, style=style, tid=tid,
                      module=module, pprefix=prefix, pleaf=leaf, norm=norm if status == "received" else None)
            return key
        producer = self.data.events[t.producer] if t.producer is not None and t.producer < len(self.data.events) else None
        lines = [shape]
        if producer is not None:
            lines.append(f"from {producer.context}" if producer.context != "user" else "from " + op_short(producer.op))
        elif t.requires_grad:
            lines.append("requires grad")
        title = t.name or (f"input t{tid}" if producer is None else f"t{tid}")
        self._add(key, kind="input", title=title, lines=lines, style="input", tid=tid)
        return key

    # --- build --------------------------------------------------------------------------
    def _build(self) -> None:
        data = self.data
        writer: dict = {}  # tid -> node key of the last drawn event that wrote it
        exits: dict = {}  # tid -> node key of the cut that took its values out of torch
        last_grad_mode: Event | None = None
        backward_events: list = []
        opt_events: list = []
        consumed: set = set()
        for e in data.events:
            if e.index < self.lo:
                continue
            if self.lo and e.kind == "cut" and e.cut in ("item", "numpy", "tolist") and all(
                    (data.tensors[r.tid].producer or 0) < self.lo for r in e.inputs if r.tid in data.tensors):
                continue  # logging left over from the previous step
            if e.kind == "module":  # op: the module's path; module: its parent's; detail: its class
                typ = e.detail.cls or (e.detail.extra or {}).get("type")
                if e.op and typ and e.op not in self.module_types:
                    self.module_types[e.op] = str(typ).rsplit(".", 1)[-1]
            if e.kind == "optimizer_step":
                opt_events.append(e)
                continue
            if e.context != "user":
                continue
            if e.kind == "grad_mode":
                last_grad_mode = e
                continue
            if e.kind == "backward":
                backward_events.append(e)
                continue
            if e.kind not in _NODE_KINDS:
                continue
            key = ("e", e.index)
            nograd = (not e.grad_enabled) or e.inference_mode
            verdict = self._verdict(e)
            site = e.site.short if e.site else ""
            if e.kind == "cut":
                style = "cut_benign" if verdict == "benign" else "cut"
            elif e.kind == "inplace":
                style = "inplace_bad" if e.index in self.evidence else "inplace"
            elif e.kind == "external":
                style = "external"
            else:
                style = "nograd" if nograd else "op"
            lines = [site] if site else []
            if e.kind in ("cut", "inplace") and e.site and e.site.code:
                needle = op_short(e.op).lstrip(".")
                lines.append(_short_code(e.site.code, needle))
            region = ""
            if nograd:
                mode = "inference_mode" if e.inference_mode else "no_grad"
                where = ""
                if last_grad_mode is not None and last_grad_mode.site is not None and not e.inference_mode:
                    where = f" @ {last_grad_mode.site.short}"
                region = mode + where
                if e.kind == "cut" and style == "cut" and e.cut not in ("no_grad", "inference_mode"):
                    lines.append(f"(under {mode})")
            self._add(key, kind=e.kind if e.kind != "requires_grad" else "op", title=_op_title(e), lines=lines,
                      style=style, module=e.module or None, event=e.index, nograd=nograd, region=region, n_ops=1,
                      outside=e.module is None)
            out_rg = any(o.requires_grad for o in e.outputs)
            seen_src: set = set()
            for ref in e.inputs:
                consumed.add(ref.tid)
                src = writer.get(ref.tid)
                if src is None:
                    src = self._tensor_node(ref.tid, e.module)
                    if src is None:
                        continue
                if (src, ref.tid) in seen_src:
                    continue
                seen_src.add((src, ref.tid))
                kind, label = self._classify(e, ref, out_rg, verdict)
                self.edges.append(_E(src, key, kind, label, ref.tid))
            for src_key in self._links(e):
                self.edges.append(_E(src_key, key, "inferred", "inferred link", None))
            for ref in e.outputs:
                writer[ref.tid] = key
                if e.kind == "inplace":
                    t = data.tensors.get(ref.tid)
                    if t is not None and t.base is not None:
                        writer[t.base] = key
            if e.kind == "cut" and not e.outputs:
                for ref in e.inputs:
                    exits[ref.tid] = key

        # backward roots
        root_sites: dict = {}
        root_api: dict = {}
        for e in backward_events:
            for ref in e.inputs:
                root_sites.setdefault(ref.tid, e.site)
                root_api.setdefault(ref.tid, e.op)
        root_tids: list = []
        for b in data.backwards:
            if b.event < self.lo:  # an earlier training step (not drawn)
                continue
            for tid in b.roots:
                if tid not in root_tids:
                    root_tids.append(tid)
                if tid not in root_sites and 0 <= b.event < len(data.events):
                    root_sites[tid] = data.events[b.event].site
                    root_api.setdefault(tid, b.api)
        for e in backward_events:
            for ref in e.inputs[:1] if e.op.endswith("backward") else e.inputs:
                if ref.tid not in root_tids:
                    root_tids.append(ref.tid)
        failed = self.summary is not None and self.summary.failure is not None and \
            self.summary.failure.status == "error"
        failed = failed or any(b.error for b in data.backwards)
        for tid in root_tids:
            t = data.tensors.get(tid)
            name = t.name if t is not None and t.name else ("loss" if len(root_tids) == 1 else f"t{tid}")
            site = root_sites.get(tid)
            api = root_api.get(tid) or "backward"
            call = "autograd.grad()" if "grad" == op_short(api) else ".backward()"
            lines = []
            if t is not None and t.shape:
                lines.append(_fmt_shape(t.shape))
            lines.append(call + (f" @ {site.short}" if site else ""))
            key = ("root", tid)
            self._add(key, kind="root", title=name, lines=lines, style="root_failed" if failed else "root", tid=tid)
            self.roots.append(key)
            src = writer.get(tid) or self._tensor_node(tid)
            if src is not None and src != key:
                self.edges.append(_E(src, key, "root", "", tid))

        # parameters nobody used: still drawn (red when the diagnosis says they starve), if they are the
        # model's: one the summary leaves out left the model (the weight a tied one replaced) or is not trained
        for t in data.params():
            if t.tid not in consumed and (self.summary is None or t.tid in self.status_by_tid):
                key = self._tensor_node(t.tid)
                if key is not None:
                    n = self.nodes[key]
                    # its cause when the diagnosis names another than "unused" (a re-created model's parameter
                    # is not used either, but the report says why: the drawing says the same)
                    ps = self.status_by_tid.get(t.tid) if self.summary is not None else None
                    cause = getattr(ps, "cause", None)
                    n.lines.append(cause.replace("_", " ") if cause and cause != "unused_parameter"
                                   and ps.status != "received" else "not used")

        # the optimizer step(s), summarised as one node
        opt_ctx = [e for e in data.events if e.context == "optimizer"]
        if opt_events or opt_ctx:
            first = (opt_events or opt_ctx)[0]
            steps = len(opt_events) or (self.summary.n_optimizer_steps if self.summary else 0) or 1
            lines = [first.site.short] if first.site else []
            if steps > 1:
                lines.append(f"x{steps}")
            key = ("opt",)
            title = "optimizer.step()"
            if opt_events and first.op and "." in first.op:  # the recorder writes "SGD.step"
                title = ".".join(first.op.split(".")[-2:]) + "()"
            self._add(key, kind="optimizer", title=title, lines=lines, style="optimizer")
            for r in self.roots:
                self.edges.append(_E(r, key, "order"))

        # the exception the traced block raised
        exc = data.exception
        if exc is not None:
            msg = textwrap.wrap(" ".join(exc.message.split()), 44)
            lines = msg[:3] + (["..."] if len(msg) > 3 else [])
            if exc.site is not None:
                lines.append(f"@ {exc.site.short}")
            key = ("exc",)
            self._add(key, kind="exception", title=exc.type, lines=lines, style="exception")
            src = None
            if exc.event is not None:
                src = ("e", exc.event)
                if src not in self.nodes:
                    ev = data.events[exc.event] if 0 <= exc.event < len(data.events) else None
                    src = None
                    if ev is not None and ev.kind == "backward":
                        for ref in ev.inputs:
                            if ("root", ref.tid) in self.nodes:
                                src = ("root", ref.tid)
                                break
            if src is not None:
                self.edges.append(_E(src, key, "raised", "raised here"))

    def _classify(self, e: Event, ref, out_rg: bool, verdict: str | None) -> tuple:
        if not ref.requires_grad:
            return "data", ""
        site = f" @ {e.site.short}" if e.site else ""
        if e.kind == "cut":
            if verdict == "benign":
                return "benign_cut", f"{cut_label(e)}{site} (benign)"
            return "cut", f"{cut_label(e)}{site}"
        if e.kind in ("op", "requires_grad") and e.outputs and not out_rg:
            if e.kind == "op" and op_short(e.op).rsplit(".", 1)[-1] in _SHAPE_ONLY_OPS:
                return "data", ""  # (ones_like(x) reads only x's shape: no gradient was ever meant to flow)
            mode = "no_grad" if not e.grad_enabled else ("inference_mode" if e.inference_mode else "")
            what = f"{op_short(e.op)} under {mode}" if mode else f"{op_short(e.op)} (no gradient)"
            return "cut", f"{what}{site}"
        if e.kind == "op" and not e.outputs:
            return "data", ""
        return "autograd", ""

    def _links(self, e: Event) -> list:
        """Inferred links of ``e``: the node keys of the events whose values came back here.

        The recorder writes ``detail.links``: indices of those events (``numpy()`` then
        ``torch.from_numpy``, ``item()`` then ``torch.tensor``), and ``detail.inferred``: how it
        knows (``"memory"``, ``"shape"``, ``"value"``).
        """
        own = ("e", e.index)
        return [("e", ev) for ev in e.detail.links or () if type(ev) is int
                and ("e", ev) in self.nodes and ("e", ev) != own]


def _adjacency(edges: list) -> tuple:
    succ: dict = {}
    pred: dict = {}
    for e in edges:
        if e.kind == "order":
            continue
        succ.setdefault(e.src, []).append(e.dst)
        pred.setdefault(e.dst, []).append(e.src)
    return succ, pred


def _reach(starts: Iterable, nbrs: dict, limit: int | None = None) -> list:
    """Breadth-first reach from ``starts`` (included), nearest first."""
    seen = {}
    q = deque()
    for s in starts:
        if s not in seen:
            seen[s] = None
            q.append(s)
    while q and (limit is None or len(seen) < limit):
        n = q.popleft()
        for m in nbrs.get(n, ()):
            if m not in seen:
                seen[m] = None
                q.append(m)
                if limit is not None and len(seen) >= limit:
                    break
    return list(seen)
