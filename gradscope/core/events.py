"""What kind of event a recorded call is, who made it, and the facts of its kind: plain data, no torch.

* :class:`EventKind` -- every value ``Event.kind`` takes (``EVENT_KINDS`` is a view of it);
* :class:`Context` -- every value ``Event.context`` takes (who made the call);
* :class:`Detail` and one slotted dataclass per family of kinds (``Event.detail``): the facts the
  recorder keeps about that kind of call, read as attributes (``e.detail.target``), written to JSON under
  the same keys as ever (``to_json``/``from_json``).

A detail answers every fact name any kind records: a fact its kind does not record reads None (a rule may
ask ``x.detail.links`` of any event on a path); a name that is no fact raises AttributeError. Keys a saved
trace holds that its kind's detail type does not know (a newer gradscope's) are kept in ``extra`` and written
back, never read as facts. For code that reads a detail like the dict it used to
be, ``d["key"]``, ``d.get``, ``in`` and iteration read its JSON form.

>>> d = detail_of("inplace", {"version_before": 0, "version_after": 1, "target": 3})
>>> d.target, d.saved, d.to_json()
(3, None, {'version_before': 0, 'version_after': 1, 'target': 3})
>>> EventKind.OP == "op", f"{EventKind.CUT}", Context("user")
(True, 'cut', 'user')
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, fields
from typing import Any

__all__ = [
    "EventKind",
    "EVENT_KINDS",
    "Context",
    "Detail",
    "CallDetail",
    "RequiresGradDetail",
    "WatchedRequiresGradDetail",
    "GradSetDetail",
    "GradReadDetail",
    "HookDetail",
    "GradModeDetail",
    "BackwardDetail",
    "ModuleDetail",
    "ModuleSetDetail",
    "OptimizerStepDetail",
    "DETAIL_TYPES",
    "detail_of",
    "kind_of",
    "context_of",
]


class _Str(enum.StrEnum):
    def __repr__(self) -> str:  # (shown like the string it equals, as Cause is)
        return repr(self.value)


class EventKind(_Str):
    """Every value ``Event.kind`` can take. A str Enum: a member equals its string (``EventKind.OP == "op"``)
    and prints and serialises as it."""

    OP = "op"                          # an ordinary torch call
    CUT = "cut"                        # a call after which gradient stops flowing (see Event.cut)
    INPLACE = "inplace"                # an in-place write (add_, +=, __setitem__, copy_, out=, inplace=True)
    GRAD_MODE = "grad_mode"            # no_grad / enable_grad / set_grad_enabled entry or exit
    REQUIRES_GRAD = "requires_grad"    # requires_grad_() or .requires_grad = ...
    BACKWARD = "backward"              # Tensor.backward, autograd.backward, autograd.grad
    GRAD_SET = "grad_set"              # .grad = ... (one event per zero_grad() call, listing every parameter it cleared)
    GRAD_READ = "grad_read"            # reads of .grad (user code, clipping) that found None after zero_grad()/.grad = None
    MODULE = "module"                  # an nn.Module forward call
    MODULE_SET = "module_set"          # a submodule attribute replaced (model.head = nn.Linear(...))
    OPTIMIZER_STEP = "optimizer_step"  # optimizer.step()
    HOOK = "hook"                      # a gradient hook registered on a tensor
    EXTERNAL = "external"              # a tensor first seen without a recorded producer
    EXCEPTION = "exception"            # the traced block raised


#: Every value ``Event.kind`` can take (a view of :class:`EventKind`).
EVENT_KINDS = tuple(str(k) for k in EventKind)


class Context(_Str):
    """Who made a call (``Event.context``): the user's own code, or torch / a library working for it."""

    USER = "user"
    OPTIMIZER = "optimizer"              # inside optimizer.step()
    SETUP = "setup"                      # torch converting parameters on the user's behalf (module.to() / .double())
    CHECKPOINT = "checkpoint"            # inside a checkpointed function
    CUSTOM_FUNCTION = "custom_function"  # inside an autograd.Function.forward
    COMPILED = "compiled"                # inside torch.compile'd code
    INIT = "init"                        # nn.init / module construction
    CLIP = "clip"                        # gradient clipping
    DATA = "data"                        # a data loader
    FUNCTORCH = "functorch"              # torch.func transforms
    BACKWARD = "backward"                # inside a backward pass
    LIBRARY = "library"                  # torch itself on the user's behalf (DDP's broadcast, state_dict())
    DISTRIBUTED = "distributed"          # torch.distributed's own code (FSDP's all-gather and sharding, DTensor's)


_KINDS = {str(k): k for k in EventKind}
_CONTEXTS = {str(c): c for c in Context}


def kind_of(s: str) -> str:
    """The :class:`EventKind` of a string (a string no member has, from a newer saved trace, stays as it is)."""
    return _KINDS.get(s, s)


def context_of(s: str) -> str:
    """The :class:`Context` of a string (an unknown one stays as it is)."""
    return _CONTEXTS.get(s, s)


# --- details -------------------------------------------------------------------------------------------
#: attribute -> JSON key, where the key is not a Python name
_JSON_KEY = {"cls": "class"}
_ATTR = {v: k for k, v in _JSON_KEY.items()}
_FACTS: set = set()  # every fact name of every detail type (what any detail answers, None when not its kind's)


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class Detail:
    """The facts of one event, by kind (the base: what any kind may carry). ``extra``: keys of a saved trace
    that no field holds, kept to be written back.

    Final once built, like the Event that holds it: nothing assigns to a detail (details with the same
    facts may be one object: the empty one of each type, a module class's). Not ``frozen=True``: a frozen
    dataclass's ``__init__`` sets each field through ``object.__setattr__``, measured 5x slower to build
    (8.4 us against 1.5 us for a CallDetail of an optimizer's writes), and every detail is built at the
    first query."""

    error: str | None = None           # the call raised: "Type: message"
    internal_error: str | None = None  # gradscope failed while recording the call (the event is minimal)
    extra: dict | None = None

    #: fields written to JSON even when None (None is a fact there, not an absence)
    ALWAYS = frozenset()

    def __getattr__(self, name: str) -> Any:  # (only for names that are no fact of any kind: a typo)
        raise AttributeError(f"{type(self).__name__} has no fact {name!r}")

    def __repr__(self) -> str:  # (the facts it holds, not every field)
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.to_json().items())})"

    def __eq__(self, other: object) -> bool:  # (equal to a detail or dict with the same JSON form)
        if isinstance(other, Detail):
            return self.to_json() == other.to_json()
        if isinstance(other, dict):
            return self.to_json() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self.to_json()))

    def to_json(self) -> dict:
        """The JSON keys (not yet JSON-safe: Event.to_json makes them so), in field order, then ``extra``."""
        always = self.ALWAYS
        d = {}
        for name in _names(type(self)):
            v = getattr(self, name)
            if v is not None or name in always:
                d[_JSON_KEY.get(name, name)] = v
        if self.extra:
            d.update(self.extra)
        return d

    @classmethod
    def from_json(cls, d: dict | None) -> "Detail":
        """From a detail's JSON (or the recorder's dict): known keys to fields, the rest to ``extra``."""
        if not d:
            return _EMPTY[cls]
        if cls not in _RENAMED and "extra" not in d:
            try:
                return cls(**d)  # (the recorder's dicts: every key a field)
            except TypeError:
                pass
        names = _FIELDS[cls]
        kw, extra = {}, None
        for k, v in d.items():
            a = _ATTR.get(k, k)
            if a in names:
                kw[a] = v
            else:
                if extra is None:
                    extra = {}
                extra[k] = v
        if extra is not None:
            kw["extra"] = extra
        return cls(**kw)

    # read-only mapping view of the JSON form (for code that reads a detail as the dict it was)
    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_json().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.to_json()

    def __iter__(self):
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())

    def __bool__(self) -> bool:
        return bool(self.to_json())

    def keys(self):
        return self.to_json().keys()

    def items(self):
        return self.to_json().items()


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class CallDetail(Detail):
    """A torch call (``op``, ``cut``, ``inplace``, ``external``): the write of an in-place call, the values a
    call took back from outside autograd, the integer outputs of max(dim)/topk."""

    targets: list | None = None         # tids an in-place call without one target wrote (foreach, optimizer)
    grads_of: list | None = None        # for those: the leaf whose .grad each is (None where not a .grad)
    hidden_write: bool | None = None    # a torch function wrote its input in place (F.embedding(max_norm=))
    grad_of: int | None = None          # the target is this leaf's .grad
    version_before: int | None = None   # the target's version before / after the write (-1: unreadable)
    version_after: int | None = None
    target: int | None = None           # the tid written
    base: int | None = None             # the tid the target is a view of
    saved: Any = None                   # True: the target was saved for backward (an optimizer step: the tids)
    saved_by: Any = None                # the event that saved it (an optimizer step: {tid: event})
    versions_before: list | None = None # an optimizer step's writes: versions of each target before / after
    versions_after: list | None = None
    step: int | None = None             # the optimizer_step event those writes belong to
    links: list | None = None           # events whose values this call took back (numpy() then from_numpy)
    inferred: str | None = None         # how those links were found: "value" | "memory" | "shape"
    outputs_of: int | None = None       # the integer outputs of this event (a cut of its own)
    attr: str | None = None             # nn.Parameter(t) re-wrap: the attribute it was registered as
    nonfinite_fill: bool | None = None  # a fill call given inf or nan (torch.full(..., nan), masked_fill(m, -inf))


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class RequiresGradDetail(Detail):
    """``requires_grad_()`` / ``.requires_grad = ...``. ``made_from``: for FSDP2 building a parameter's sharded form
    with the original's flag, the original parameter's tid."""

    value: bool | None = None
    made_from: int | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class WatchedRequiresGradDetail(RequiresGradDetail):
    """A freeze gradscope.watch saw before the trace started, at its step ``watch_step`` (None: unknown)."""

    watch_step: int | None = None
    ALWAYS = frozenset({"watch_step"})


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class GradSetDetail(Detail):
    """``.grad = ...``: ``value`` None (cleared) or "tensor"; ``zero_grad``: one event of a zero_grad() call."""

    value: str | None = None
    zero_grad: bool | None = None
    ALWAYS = frozenset({"value"})


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class GradReadDetail(Detail):
    """``t.grad`` read as None after it was cleared: ``cleared_by`` the event that cleared it."""

    found: Any = None
    cleared_by: int | None = None
    ALWAYS = frozenset({"found", "cleared_by"})


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class HookDetail(Detail):
    """A gradient hook registered on a tensor."""

    hook_return: list | None = None     # the hook's return line (a Frame's JSON)
    hook: str | None = None             # the hook's label (its qualified name)
    before_trace: bool | None = None    # registered before the trace started
    post_accumulate: bool | None = None # register_post_accumulate_grad_hook
    cells: list | None = None           # ids of the closure cells it reads (hooks made in a loop)
    freevars: list | None = None        # their names
    cell_values: list | None = None     # their values at registration (repr of plain values, else None)


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class GradModeDetail(Detail):
    """no_grad / enable_grad / set_grad_enabled: the mode set, the one before, the library function it ran in."""

    enabled: bool | None = None
    prev: bool | None = None
    lib_fn: str | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class BackwardDetail(Detail):
    """Tensor.backward / autograd.backward / autograd.grad."""

    api: str | None = None
    roots: list | None = None           # tids backward started from
    inputs: list | None = None          # tids of inputs=
    create_graph: bool | None = None
    retain_graph: bool | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ModuleDetail(Detail):
    """An nn.Module forward call: its class (JSON "class"), whether it returned its input as is, from where."""

    cls: str | None = None
    returned_input: bool | None = None
    return_line: list | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class ModuleSetDetail(Detail):
    """A submodule or parameter attribute replaced: its path, the classes, the parameters that left, tying."""

    attr: str | None = None
    old_class: str | None = None
    new_class: str | None = None
    old_params: list | None = None
    tied: bool | None = None
    tied_to: str | None = None


@dataclass(slots=True, kw_only=True, repr=False, eq=False)
class OptimizerStepDetail(Detail):
    """optimizer.step(): its class (JSON "class"), the tids it holds, those whose .grad was None."""

    cls: str | None = None
    params: list | None = None
    found_none: list | None = None


#: the detail type of each kind (a kind not listed, or one a newer trace names: the base :class:`Detail`)
DETAIL_TYPES = {
    EventKind.OP: CallDetail,
    EventKind.CUT: CallDetail,
    EventKind.INPLACE: CallDetail,
    EventKind.EXTERNAL: CallDetail,
    EventKind.EXCEPTION: CallDetail,
    EventKind.REQUIRES_GRAD: RequiresGradDetail,
    EventKind.GRAD_SET: GradSetDetail,
    EventKind.GRAD_READ: GradReadDetail,
    EventKind.HOOK: HookDetail,
    EventKind.GRAD_MODE: GradModeDetail,
    EventKind.BACKWARD: BackwardDetail,
    EventKind.MODULE: ModuleDetail,
    EventKind.MODULE_SET: ModuleSetDetail,
    EventKind.OPTIMIZER_STEP: OptimizerStepDetail,
}


def detail_of(kind: str, d: dict | None) -> Detail:
    """The typed detail of an event of ``kind`` from its JSON (or the recorder's dict)."""
    if isinstance(d, Detail):
        return d
    cls = DETAIL_TYPES.get(kind, Detail)
    if cls is RequiresGradDetail and d and "watch_step" in d:
        cls = WatchedRequiresGradDetail
    return cls.from_json(d)


def _names(cls) -> tuple:
    return _NAMES[cls]


_NAMES: dict = {}  # detail type -> its fact names, in field order
_FIELDS: dict = {}  # the same, as a set
_EMPTY: dict = {}
_RENAMED: set = set()  # detail types with a field whose JSON key is not its name
for _c in (Detail, *dict.fromkeys(DETAIL_TYPES.values()), WatchedRequiresGradDetail):
    _NAMES[_c] = tuple(f.name for f in fields(_c) if f.name != "extra")
    _FIELDS[_c] = frozenset(_NAMES[_c])
    if any(n in _JSON_KEY for n in _NAMES[_c]):
        _RENAMED.add(_c)
    _FACTS.update(_NAMES[_c])
for _c in _NAMES:
    for _f in _FACTS - _FIELDS[_c]:  # a fact of other kinds reads None here (a class attribute: no lookup miss)
        if not hasattr(_c, _f):
            setattr(_c, _f, None)
    _EMPTY[_c] = _c()
del _c, _f
