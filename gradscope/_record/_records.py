"""The small records the recorder's parts store and pass to each other, by field name.

Records written on every recorded op (``Recent``, ``Open``) are stored as plain tuples in the
field order given here and read through the class (``Recent._make(x)`` / unpacking): a named
tuple costs a Python-level constructor call per op. The others are built as the classes.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from itertools import compress as _compress, repeat as _repeat
from operator import is_not as _is_not, itemgetter as _itemgetter
from typing import Any, NamedTuple


@dataclass(slots=True, eq=False)
class RawEvent:
    """One event as the recorder keeps it while recording (the fields of ``core.model.Event``, raw): ``site``
    the frame walk's tuple of (code id, line), ``inputs``/``outputs`` packed refs (``_refs._pk``), ``kind``,
    ``context`` and ``cut`` plain strings, ``detail`` a dict. A component may still add to its own record
    (a module path found later, a backward's outputs); ``Sync`` builds the final ``Event`` from it once, on
    the first query (and again where a record changed after that: ``Sink.changed``)."""

    index: int
    kind: str
    op: str
    site: Any
    inputs: Any = ()
    outputs: Any = ()
    grad_enabled: bool = True
    inference_mode: bool = False
    module: str | None = None
    context: str = "user"
    cut: str | None = None
    detail: dict | None = None


class Call(NamedTuple):
    """A running module call on the recorder's module stack (pushed by its forward pre hook)."""

    path: str  # the module's path in its model
    frame: int  # id() of the Module._call_impl frame that runs the call
    caller: int  # id() of that frame's caller
    raw: tuple  # the call's user frames (code id, line), innermost first: walked once per call
    flags: int  # region flags the ops inside inherit


class Recent(NamedTuple):
    """A recent op result (stored as a plain tuple in this order): re-wrapped memory is matched to it."""

    ptr: int  # data_ptr()
    tid: int
    event: int  # index of the event that made it
    numel: int
    has_history: bool  # a graph node made it (False: a detach / .data of a grad-requiring tensor)


class Open(NamedTuple):
    """A grad-requiring result not yet freed by a backward (stored as a plain tuple in this order)."""

    event: int
    tid: int


class Array(NamedTuple):
    """A NumPy array a tensor's values left through (``.numpy()``)."""

    ptr: int
    nbytes: int
    shape: tuple
    event: int


class PendingStep(NamedTuple):
    """An optimizer.step() between its pre and post hook: what its end is compared with."""

    event: int  # the optimizer_step event
    raw: tuple  # its call site
    tensors: list  # (parameter, tid) of the parameters with a .grad
    before: list  # their versions when the step began
    saved: dict  # tid -> event that saved it for a live graph
    cls: str  # the optimizer's class name


class Owner(NamedTuple):
    """Where a parameter was created: its module's class, attribute and call site."""

    ref: Any  # _Held / reference to the parameter
    cls: str
    attr: str
    raw: tuple


class Source(NamedTuple):
    """A tensor of a called model: its root and its path in it."""

    ref: Any
    root: Any  # _Root
    path: str


class Named(NamedTuple):
    """A model tensor's full name (root prefix + module path)."""

    ref: Any
    name: str


class ModelPath(NamedTuple):
    """Where a tensor the trace saw sits in a called model."""

    root: Any  # _Root
    path: str


class LateAttr(NamedTuple):
    """A module_set event made before its model's root was seen: its path is filled in later."""

    module: Any  # weakref to the module whose attribute changed
    name: str  # the attribute
    event: int
    old: dict  # old parameter tid -> its name within the old module
    new: Any  # _Held of the parameter put in place (None for a submodule)


class PendingBackward(NamedTuple):
    """A backward call's raw lists, turned into BackwardNode objects on the first query."""

    rec: Any  # BackwardRecord
    raw_nodes: list  # [RawNode] by nid
    seen: dict  # nid -> (sent norms, received norms)
    leaf_val: dict  # leaf tid -> norm of its .grad right after the call


class BackwardState(NamedTuple):
    """What the walk before a backward call hands to the code after it."""

    raw_nodes: list  # [RawNode] by nid
    got: list  # what the node hooks saw, in run order
    leaves: list  # (nid, leaf tid)
    input_tids: Any  # tids of autograd.grad(inputs=...) / backward(inputs=...), else falsy
    graph: Any  # the nodes in nid order when the graph is freed by this call, else None
    nodes: Any  # the nodes in nid order (read only if the call ends with a non-finite gradient: _values)


class RawNode:
    """One graph node as the walk before a backward call saw it."""

    __slots__ = ("name", "event", "next", "leaf", "type", "mode", "input_nrs")

    def __init__(self, name, event, nxt, leaf, tp, mode, input_nrs):
        self.name = name  # node.name()
        self.event = event  # index of the event that made it (None: not a recorded op's)
        self.next = nxt  # nids of next_functions (None where an edge goes nowhere)
        self.leaf = leaf  # tid of the leaf an AccumulateGrad node feeds, else None
        self.type = tp  # type(node)
        self.mode = mode  # how it is watched (_graph._M_*)
        self.input_nrs = input_nrs  # input_nr of each next_functions edge


class HookState:
    """Shared by the node hooks of one backward call (see _graph._node_post)."""

    __slots__ = ("got", "raw_nodes", "refs", "held_bytes", "need_received", "measure_now")

    def __init__(self, got, raw_nodes, refs, need_received, measure_now):
        self.got = got  # (nid, sent, received) per hook call, in run order
        self.raw_nodes = raw_nodes
        self.refs = refs  # the recorder's tid -> reference
        self.held_bytes = 0  # bytes of big gradients kept so far (budget _graph._HOLD_BYTES)
        self.need_received = need_received  # by nid: what the node receives is read
        self.measure_now = measure_now  # nids whose sent gradients are measured at once


def error_key(e) -> tuple:
    """What tells one exception from another without holding it (its traceback holds the user's frames)."""
    try:
        return type(e).__name__, str(e)[:500]
    except Exception:  # a user exception whose __str__ raises: the type alone (never raise out of here)
        return type(e).__name__, ""


FIRST, SECOND = _itemgetter(0), _itemgetter(1)  # (C-level pickers for map(): _frames and _module_facts use them too)
_deref = weakref.ref.__call__  # (a weak reference's target, called in C by map)


class _ModulePaths:
    """module -> its path in the model, keyed by id() with a weak reference to check identity (a
    WeakKeyDictionary lookup builds a new weak reference on every call: this is on the hot path)."""

    __slots__ = ("_d",)

    def __init__(self):
        self._d: dict = {}

    def get(self, m, default=None):
        e = self._d.get(id(m))
        return e[1] if e is not None and e[0]() is m else default

    def __contains__(self, m):
        e = self._d.get(id(m))
        return e is not None and e[0]() is m

    def __setitem__(self, m, path):
        self._d[id(m)] = (weakref.ref(m), path)

    def __len__(self):
        return len(self._d)

    def items(self):
        """``[(module, path)]`` of the modules alive (dereferenced and filtered in C: BERT has hundreds)."""
        vals = list(self._d.values())
        ms = list(map(_deref, map(FIRST, vals)))
        return list(_compress(zip(ms, map(SECOND, vals)), map(_is_not, ms, _repeat(None))))


class _Root:
    """A model called in the trace: its user's variable (None when none is visible), whether its own
    names are bare indices, and its class."""

    __slots__ = ("ref", "var", "flat", "cls", "leaf")

    def __init__(self, ref, var, flat, cls, leaf):
        self.ref, self.var, self.flat, self.cls, self.leaf = ref, var, flat, cls, leaf
