"""The trace data model: plain data, no torch imports.

Everything the recorder learns about a training step ends up here as small
slotted dataclasses that can be rendered, diagnosed, compared and saved as
JSON without touching torch.

>>> s = Site("train.py", 12, "step", "z = y.detach() * w")
>>> s.short
'train.py:12'
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

from .causes import CUT_KINDS, Cause
from .events import EVENT_KINDS, Context, Detail, EventKind, detail_of

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "Frame",
    "Site",
    "TensorRef",
    "TensorInfo",
    "GradInfo",
    "Event",
    "BackwardNode",
    "BackwardRecord",
    "ExceptionInfo",
    "TraceData",
    "TraceFileError",
    "EVENT_KINDS",
    "EventKind",
    "Context",
    "Detail",
    "CUT_KINDS",
    "Cause",
]

SCHEMA = "gradscope.trace"
SCHEMA_VERSION = 1

_NO_DETAIL = Detail()
_KINDS = {str(k): k for k in EventKind}
_CONTEXTS = {str(c): c for c in Context}
_CUTS = {str(c): c for c in Cause}


def _short_path(path: str) -> str:
    return os.path.basename(path) if path else "?"


@dataclass(frozen=True, slots=True)
class Frame:
    """One user frame: where a call came from."""

    filename: str
    lineno: int
    function: str
    code: str = ""

    @property
    def short(self) -> str:
        return f"{_short_path(self.filename)}:{self.lineno}"

    def to_json(self) -> list:
        return [self.filename, self.lineno, self.function, self.code]

    @classmethod
    def from_json(cls, d: list) -> "Frame":
        return cls(str(d[0]), int(d[1]), str(d[2]), str(d[3]))


@dataclass(frozen=True, slots=True)
class Site:
    """The user's line: file, line number, function, source text, and the user frames
    that led there (``stack``, outermost first; its last frame is the site itself)."""

    filename: str
    lineno: int
    function: str
    code: str = ""
    stack: tuple = ()
    label: str = ""  # how to show the file when its name means nothing (a notebook cell: "In[3]")

    @property
    def short(self) -> str:
        """``file.py:25`` (or ``In[3]:25`` for a notebook cell)"""
        return f"{self.label or _short_path(self.filename)}:{self.lineno}"

    def __str__(self) -> str:
        code = f": {self.code}" if self.code else ""
        return f"{self.short} in {self.function}{code}"

    def frame(self) -> Frame:
        return Frame(self.filename, self.lineno, self.function, self.code)

    def to_json(self) -> dict:
        return {
            "filename": self.filename,
            "lineno": self.lineno,
            "function": self.function,
            "code": self.code,
            "stack": [f.to_json() for f in self.stack],
            **({"label": self.label} if self.label else {}),
        }

    @classmethod
    def from_json(cls, d: dict | None) -> "Site | None":
        if d is None:
            return None
        return cls(
            str(d["filename"]),
            int(d["lineno"]),
            str(d["function"]),
            str(d.get("code", "")),
            tuple(Frame.from_json(f) for f in d.get("stack", ())),
            str(d.get("label", "")),
        )


class TensorRef:
    """A tensor as an event saw it: trace-local id plus its state at that moment.

    ``shape``/``dtype``/``device`` are shared with the tensor's other refs (memory: a
    100k-event trace holds a few hundred thousand of these)."""

    __slots__ = ("tid", "meta", "requires_grad", "is_leaf", "version")

    def __init__(self, tid, shape=(), dtype="?", device="?", requires_grad=False, is_leaf=True, version=0, *, meta=None):
        self.tid = tid
        self.meta = meta if meta is not None else (tuple(shape), dtype, device)
        self.requires_grad = requires_grad
        self.is_leaf = is_leaf
        self.version = version

    shape = property(lambda self: self.meta[0])
    dtype = property(lambda self: self.meta[1])
    device = property(lambda self: self.meta[2])

    def __eq__(self, other):
        return isinstance(other, TensorRef) and self.to_json() == other.to_json()

    def __repr__(self):
        return (f"TensorRef(tid={self.tid}, shape={self.shape}, dtype={self.dtype!r}, device={self.device!r}, "
                f"requires_grad={self.requires_grad}, is_leaf={self.is_leaf}, version={self.version})")

    def to_json(self) -> list:
        return [self.tid, list(self.shape), self.dtype, self.device, self.requires_grad, self.is_leaf, self.version]

    @classmethod
    def from_json(cls, d: list) -> "TensorRef":
        return cls(int(d[0]), tuple(d[1]), str(d[2]), str(d[3]), bool(d[4]), bool(d[5]), int(d[6]))


@dataclass(slots=True)
class GradInfo:
    """What a tensor's ``.grad`` looked like after a backward (or at the end of the trace)."""

    status: str  # "received" | "none" | "zero" | "nonfinite"
    norm: float | None = None
    backward: int | None = None  # index of the backward event

    def to_json(self) -> dict:
        norm = self.norm
        if norm is not None and not math.isfinite(norm):
            norm = str(norm)
        return {"status": self.status, "norm": norm, "backward": self.backward}

    @classmethod
    def from_json(cls, d: dict | None) -> "GradInfo | None":
        if d is None:
            return None
        norm = d.get("norm")
        if isinstance(norm, str):
            norm = float(norm)
        return cls(str(d["status"]), norm, d.get("backward"))


@dataclass(slots=True)
class TensorInfo:
    """Everything known about one tensor seen by the trace (never the tensor itself)."""

    tid: int
    shape: tuple
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    producer: int | None = None  # index of the event that created it
    name: str | None = None  # parameter / buffer name, or the user's variable name
    role: str = "tensor"  # "param" | "buffer" | "tensor"
    base: int | None = None  # tid of the tensor it is a view of
    grad: GradInfo | None = None  # latest gradient status
    retains_grad: bool = False
    alive: bool = True

    def label(self) -> str:
        return self.name or f"t{self.tid}"

    def to_json(self) -> dict:
        return {
            "tid": self.tid,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "device": self.device,
            "requires_grad": self.requires_grad,
            "is_leaf": self.is_leaf,
            "producer": self.producer,
            "name": self.name,
            "role": self.role,
            "base": self.base,
            "grad": self.grad.to_json() if self.grad else None,
            "retains_grad": self.retains_grad,
        }

    @classmethod
    def from_json(cls, d: dict) -> "TensorInfo":
        return cls(
            int(d["tid"]),
            tuple(d["shape"]),
            str(d["dtype"]),
            str(d["device"]),
            bool(d["requires_grad"]),
            bool(d["is_leaf"]),
            d.get("producer"),
            d.get("name"),
            str(d.get("role", "tensor")),
            d.get("base"),
            GradInfo.from_json(d.get("grad")),
            bool(d.get("retains_grad", False)),
            alive=False,
        )


@dataclass(slots=True, init=False)
class Event:
    """One recorded call, final when stored (the recorder builds it once, from its own raw record).

    ``kind`` is an :class:`~.events.EventKind`; for ``kind == "cut"``, ``cut`` is a kind of cut (a
    :class:`Cause`, one of :data:`CUT_KINDS`). ``context`` (a :class:`~.events.Context`) says who made the
    call: ``"user"``, ``"optimizer"``, ``"custom_function"`` (inside an autograd.Function.forward),
    ``"checkpoint"``, ``"init"`` (nn.init / module construction), ``"clip"``, ``"data"``, ``"compiled"``,
    ``"setup"`` (torch working on parameters on the user's behalf: module.to() / .double() converting them),
    ``"distributed"`` (torch.distributed's own code: FSDP's all-gathers and sharding, DDP's buckets, DTensor's
    redistribution).
    All three are str Enums: they equal their strings. ``detail`` holds the kind's facts, typed
    (:class:`~.events.Detail`: a dict given here becomes the kind's detail type). ``verdict``: ``"harmful"``
    or ``"benign"`` for cuts, as loaded from a saved trace, or set by the Trace from its diagnosis' verdicts
    (``tr.cuts()``); the diagnosis itself never writes it (its verdicts are data: ``Diagnosis.verdicts()``).
    """

    index: int
    kind: EventKind
    op: str
    site: Site | None
    inputs: tuple = ()
    outputs: tuple = ()
    grad_enabled: bool = True
    inference_mode: bool = False
    module: str | None = None
    context: Context = Context.USER
    cut: Cause | None = None
    detail: Detail = _NO_DETAIL
    verdict: str | None = None

    def __init__(self, index: int, kind: EventKind, op: str, site: Site | None, inputs: tuple = (),
                 outputs: tuple = (), grad_enabled: bool = True, inference_mode: bool = False,
                 module: str | None = None, context: Context = Context.USER, cut: Cause | None = None,
                 detail: Detail = _NO_DETAIL, verdict: str | None = None):
        # (a plain string or dict given: its enum member, its kind's typed detail; written out, not in a
        # __post_init__, to keep the one construction per event at the first query cheap)
        self.index = index
        self.kind = kind = _KINDS.get(kind, kind) if type(kind) is str else kind
        self.op = op
        self.site = site
        self.inputs = inputs
        self.outputs = outputs
        self.grad_enabled = grad_enabled
        self.inference_mode = inference_mode
        self.module = module
        self.context = _CONTEXTS.get(context, context) if type(context) is str else context
        self.cut = _CUTS.get(cut, cut) if type(cut) is str else cut
        self.detail = detail if isinstance(detail, Detail) else detail_of(kind, detail)
        self.verdict = verdict

    def __str__(self) -> str:
        where = f" @ {self.site.short}" if self.site else ""
        what = f"{self.kind}:{self.cut}" if self.cut else self.kind
        return f"#{self.index} {what} {self.op}{where}"

    def input_ids(self) -> list[int]:
        return [r.tid for r in self.inputs]

    def output_ids(self) -> list[int]:
        return [r.tid for r in self.outputs]

    def to_json(self, site_index=None, verdict: str | None | bool = False) -> dict:
        """``verdict``: the verdict to write (the diagnosis'); by default the event's own ``.verdict``."""
        if verdict is False:
            verdict = self.verdict
        if site_index is not None:
            site = site_index(self.site)
        else:
            site = self.site.to_json() if self.site else None
        d = {
            "index": self.index,
            "kind": self.kind,
            "op": self.op,
            "site": site,
            "inputs": [r.to_json() for r in self.inputs],
            "outputs": [r.to_json() for r in self.outputs],
            "grad_enabled": self.grad_enabled,
            "inference_mode": self.inference_mode,
            "module": self.module,
            "context": self.context,
            "cut": self.cut,
            "detail": _json_safe(self.detail.to_json()),
        }
        if verdict:
            d["verdict"] = verdict
        return d

    @classmethod
    def from_json(cls, d: dict, sites: list | None = None) -> "Event":
        site = d.get("site")
        if isinstance(site, int) and not isinstance(site, bool):
            if sites is None or not 0 <= site < len(sites):
                raise ValueError(f"event {d.get('index')} refers to site {site}, which is not in the sites table")
            site = sites[site]
        else:
            site = Site.from_json(site)
        return cls(
            int(d["index"]),
            str(d["kind"]),  # (made the EventKind member by __init__; a kind no member has stays a str)
            str(d["op"]),
            site,
            tuple(TensorRef.from_json(r) for r in d.get("inputs", ())),
            tuple(TensorRef.from_json(r) for r in d.get("outputs", ())),
            bool(d.get("grad_enabled", True)),
            bool(d.get("inference_mode", False)),
            d.get("module"),
            str(d.get("context", "user")),
            d.get("cut"),
            dict(d.get("detail") or {}),  # (typed by kind in __init__; unknown keys kept in extra)
            d.get("verdict"),
        )


@dataclass(slots=True)
class BackwardNode:
    """One autograd node seen during a backward pass."""

    nid: int
    name: str  # e.g. "MulBackward0"
    event: int | None  # the forward event that created it, when known
    next: tuple  # nids of next nodes (None where the edge is empty)
    ran: bool = False
    out_norms: tuple = ()  # norm of the gradient sent along each next edge (None: no gradient; -1: sent, not measured)
    leaf: int | None = None  # tid of the leaf, for AccumulateGrad nodes
    custom_backward: Frame | None = None  # where a custom Function's backward returns

    def to_json(self) -> dict:
        return {
            "nid": self.nid,
            "name": self.name,
            "event": self.event,
            "next": list(self.next),
            "ran": self.ran,
            "out_norms": [_num(x) for x in self.out_norms],
            "leaf": self.leaf,
            "custom_backward": self.custom_backward.to_json() if self.custom_backward else None,
        }

    @classmethod
    def from_json(cls, d: dict) -> "BackwardNode":
        cb = d.get("custom_backward")
        return cls(
            int(d["nid"]),
            str(d["name"]),
            d.get("event"),
            tuple(d.get("next", ())),
            bool(d.get("ran", False)),
            tuple(_unnum(x) for x in d.get("out_norms", ())),
            d.get("leaf"),
            Frame.from_json(cb) if cb else None,
        )


@dataclass(slots=True)
class BackwardRecord:
    """What one backward call did: its graph, which nodes ran, what leaves received."""

    event: int  # index of the backward event
    api: str  # "Tensor.backward" | "torch.autograd.backward" | "torch.autograd.grad"
    roots: tuple  # tids of the tensors backward started from
    nodes: dict = field(default_factory=dict)  # nid -> BackwardNode
    root_nodes: tuple = ()  # nids of the roots' grad_fn
    leaf_grads: dict = field(default_factory=dict)  # tid -> GradInfo right after this backward
    arrived: dict = field(default_factory=dict)  # tid -> norm of the gradient that reached its AccumulateGrad
    first_nonfinite: int | None = None  # nid of the first node that produced inf/nan
    error: str | None = None
    compiled: bool = False  # a compiled region was in the graph
    values: dict = field(default_factory=dict)  # tid -> "nan" | "inf" | "finite": read after a non-finite gradient

    def to_json(self) -> dict:
        return {
            "event": self.event,
            "api": self.api,
            "roots": list(self.roots),
            "nodes": [n.to_json() for n in self.nodes.values()],
            "root_nodes": list(self.root_nodes),
            "leaf_grads": {str(k): v.to_json() for k, v in self.leaf_grads.items()},
            "arrived": {str(k): _num(v) for k, v in self.arrived.items()},
            "first_nonfinite": self.first_nonfinite,
            "error": self.error,
            "compiled": self.compiled,
            **({"values": {str(k): v for k, v in self.values.items()}} if self.values else {}),
        }

    @classmethod
    def from_json(cls, d: dict) -> "BackwardRecord":
        nodes = {}
        for nd in d.get("nodes", ()):
            n = BackwardNode.from_json(nd)
            nodes[n.nid] = n
        return cls(
            int(d["event"]),
            str(d["api"]),
            tuple(d.get("roots", ())),
            nodes,
            tuple(d.get("root_nodes", ())),
            {int(k): GradInfo.from_json(v) for k, v in (d.get("leaf_grads") or {}).items()},
            {int(k): _unnum(v) for k, v in (d.get("arrived") or {}).items()},
            d.get("first_nonfinite"),
            d.get("error"),
            bool(d.get("compiled", False)),
            {int(k): str(v) for k, v in (d.get("values") or {}).items() if v in ("nan", "inf", "finite")},
        )


@dataclass(slots=True)
class ExceptionInfo:
    """The exception the traced block raised."""

    type: str
    message: str
    event: int | None = None  # the event during which it was raised, when known
    site: Site | None = None

    def to_json(self) -> dict:
        return {
            "type": self.type,
            "message": self.message,
            "event": self.event,
            "site": self.site.to_json() if self.site else None,
        }

    @classmethod
    def from_json(cls, d: dict | None) -> "ExceptionInfo | None":
        if d is None:
            return None
        return cls(str(d["type"]), str(d["message"]), d.get("event"), Site.from_json(d.get("site")))


class TraceFileError(ValueError):
    """A saved trace could not be read: what is wrong, and what to do."""


@dataclass
class TraceData:
    """A whole recorded step as plain data."""

    events: list = field(default_factory=list)
    tensors: dict = field(default_factory=dict)  # tid -> TensorInfo
    backwards: list = field(default_factory=list)  # BackwardRecord, in order
    exception: ExceptionInfo | None = None
    unseen: list = field(default_factory=list)  # notes on what the trace could not see
    meta: dict = field(default_factory=dict)
    truncated: bool = False  # recording stopped early (max_events / steps)

    # --- queries ---------------------------------------------------------------
    def tensor(self, tid: int) -> TensorInfo:
        return self.tensors[tid]

    def name_of(self, tid: int | None) -> str:
        if tid is None:
            return "?"
        t = self.tensors.get(tid)
        return t.label() if t else f"t{tid}"

    def params(self) -> list:
        """Parameters seen by the trace, in first-seen order."""
        return [t for t in self.tensors.values() if t.role == "param"]

    def by_kind(self, *kinds: str) -> Iterator[Event]:
        return (e for e in self.events if e.kind in kinds)

    def producer(self, tid: int) -> Event | None:
        t = self.tensors.get(tid)
        if t is None or t.producer is None:
            return None
        return self.events[t.producer]

    # --- JSON --------------------------------------------------------------------
    def to_json(self, verdicts: dict | None = None) -> dict:
        """The trace as JSON; ``verdicts`` ({event index: verdict}, the diagnosis'): the events' verdicts to write
        (by default each event's own ``.verdict``, as loaded)."""
        sites: list = []
        ids: dict = {}
        keep: list = []

        def site_index(site):
            if site is None:
                return None
            i = ids.get(id(site))
            if i is None:
                i = ids[id(site)] = len(sites)
                sites.append(site.to_json())
                keep.append(site)
            return i

        if verdicts is None:
            events = [e.to_json(site_index) for e in self.events]
        else:
            events = [e.to_json(site_index, verdict=verdicts.get(e.index)) for e in self.events]
        d = self._to_json_head()
        d["sites"] = sites
        d["events"] = events
        d["backwards"] = [b.to_json() for b in self.backwards]
        d["exception"] = self.exception.to_json() if self.exception else None
        return d

    def _to_json_head(self) -> dict:
        return {
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            "meta": _json_safe(self.meta),
            "truncated": self.truncated,
            "unseen": list(self.unseen),
            "tensors": [t.to_json() for t in self.tensors.values()],
        }

    @classmethod
    def from_json(cls, d: Any, source: str = "trace") -> "TraceData":
        if not isinstance(d, dict) or d.get("schema") != SCHEMA:
            raise TraceFileError(
                f"{source} is not a gradscope trace (no \"schema\": \"{SCHEMA}\" field); "
                "save traces with tr.save(path) or `gradscope run --save`."
            )
        version = d.get("version")
        if version != SCHEMA_VERSION:
            raise TraceFileError(
                f"{source} has trace schema version {version!r}, but this gradscope reads version "
                f"{SCHEMA_VERSION}; re-record the trace with this version of gradscope."
            )
        missing = [k for k in _TABLES if k not in d]
        if missing:
            raise TraceFileError(
                f"{source} is damaged: its {', '.join(repr(k) for k in missing)} "
                f"{'table is' if len(missing) == 1 else 'tables are'} missing (every saved trace has "
                f"{', '.join(repr(k) for k in _TABLES)}); the file was cut or edited; re-record the trace.")
        try:
            tensors = {}
            for td in d.get("tensors", ()):
                t = TensorInfo.from_json(td)
                tensors[t.tid] = t
            sites = [Site.from_json(x) for x in d.get("sites") or ()]
            data = cls(
                events=[Event.from_json(e, sites) for e in d.get("events", ())],
                tensors=tensors,
                backwards=[BackwardRecord.from_json(b) for b in d.get("backwards", ())],
                exception=ExceptionInfo.from_json(d.get("exception")),
                unseen=list(d.get("unseen", ())),
                meta=dict(d.get("meta") or {}),
                truncated=bool(d.get("truncated", False)),
            )
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            raise TraceFileError(
                f"{source} is damaged: a field is missing or has the wrong type ({type(e).__name__}: {e}); "
                "re-record the trace."
            ) from None
        bad = data._dangling()
        if bad:
            raise TraceFileError(f"{source} is damaged: {bad}; the file was cut or edited; re-record the trace.")
        return data

    def _dangling(self) -> str | None:
        """What a loaded trace refers to that it does not hold (an event's tensor, a backward call's event), else
        None: a table emptied or cut would otherwise read as a trace where nothing went wrong."""
        tens, n = self.tensors, len(self.events)
        for e in self.events:
            for r in (*e.inputs, *e.outputs):
                if r.tid not in tens:
                    return (f"event {e.index} ({e.op}) refers to tensor {r.tid}, which its \"tensors\" table does "
                            f"not hold")
        for b in self.backwards:
            if not 0 <= b.event < n:
                return f"a backward call refers to event {b.event}, but the trace holds {n} events"
            for t in b.roots:
                if t not in tens:
                    return f"backward call {b.event} starts from tensor {t}, which its \"tensors\" table does not hold"
        return None

    def save(self, path: str | os.PathLike, verdicts: dict | None = None, verification: dict | None = None) -> None:
        """Write the trace as JSON; ``verification``: what a re-run verified (``Verification.to_json()``), kept in
        the meta table as ``"verification"`` for a loaded trace to say again."""
        doc = self.to_json(verdicts)
        if verification is not None:
            doc["meta"] = {**doc["meta"], "verification": verification}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, separators=(",", ":"))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TraceData":
        p = os.fspath(path)
        try:
            with open(p, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            raise TraceFileError(f"{p}: no such file; pass the path of a trace saved with tr.save().") from None
        except IsADirectoryError:
            raise TraceFileError(f"{p} is a directory, not a trace file; pass the path of a .json file written by tr.save().") from None
        except UnicodeDecodeError:
            raise TraceFileError(
                f"{p} is not a gradscope trace: it is not UTF-8 JSON text; pass a file written by tr.save() or "
                "`gradscope run --save`.") from None
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            what = "is empty" if not text.strip() else f"is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})"
            raise TraceFileError(
                f"{p} {what}; the file may be truncated. Re-save it with tr.save()."
            ) from None
        return cls.from_json(d, source=p)


_TABLES = ("tensors", "events", "backwards")  # (what every saved trace holds, possibly empty)


def strip_torch_prefix(op: str) -> str:
    """``torch.nn.functional.linear`` -> ``linear``; ``torch.Tensor.detach`` -> ``detach``."""
    for p in ("torch.nn.functional.", "torch.Tensor.", "torch._C._nn.", "torch._C.", "torch."):
        if op.startswith(p):
            return op[len(p):]
    return op


def fmt_norm(x: float | None) -> str:
    """A gradient norm for people: ``0.576``, ``1.23e-05``, ``0``, ``inf``."""
    if x is None:
        return ""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e4:
        return f"{x:.3g}"
    return f"{x:.2e}"


def _num(x):
    if x is None:
        return None
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def _unnum(x):
    if isinstance(x, str):
        return float(x)
    return x


def _json_safe(v: Any) -> Any:
    """Make detail dicts JSON-safe (tuples -> lists, odd objects -> repr, inf -> str)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, dict):
        return {str(k): _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    if isinstance(v, (Site, Frame)):
        return v.to_json()
    return repr(v)

