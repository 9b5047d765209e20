"""The recorder: builds the components (see the package docstring), pushes their mode, starts and stops.

A private TorchFunctionMode sees every user-level torch call; global module,
optimizer and registration hooks name parameters and see optimizer steps; autograd
node hooks (installed for the duration of each backward call) see which nodes ran and
what gradient each sent. Nothing here keeps a user's tensor alive: tensors are
identified by trace-local ids through weak references (module parameters and buffers:
held while recording, then found through their module, see ``_Held``; a weak reference
blocks torch.utils.swap_tensors).

Transparent to PyTorch itself: property reads and private writes PyTorch performs pass
straight through (``_SKIP``); graph nodes are mapped to events by sequence number, never
given a Python object while recording (``_seq``); own arithmetic runs with every mode set
aside (``_Own``); hooks keep detached aliases of gradients (``_held``); nothing is recorded
under torch.jit.trace; once steps=/max_events= is reached the recorder leaves the mode
stack and its hooks (``_limit_reached``).

Cost matters here (benchmarks/overhead.py): the hot paths record compact data (packed
ints, interned code-id sites) and the rest is built on the first query (``sync``).
- A module call is walked once (its pre hook); ops inside it walk only up to its frame.
- ``optimizer.step()`` runs with the recorder off the mode stack; its parameter writes
  are one event from version counters. ``zero_grad()``'s ``p.grad = None`` calls are one
  event (bracketed by its profiler marker).
- Backward: each graph edge is observed from one end (see ``Backward._pre``), so roughly
  half the nodes of a chain get a hook; edge norms are computed only when a leaf ends zero
  or non-finite; big gradients are kept only within a small budget (``_HOLD_BYTES``).
"""
from __future__ import annotations

import sys

import weakref

import torch
from torch.overrides import TorchFunctionMode

from . import _frames
from ._active import _local
from ._backward import Backward
from ._calls import Calls
from ._compat import (
    function_stack_len as _stack_len, function_stack_at as _stack_at,
    current_function_modes, pop_function_mode, pop_function_mode_above, push_function_mode, push_function_mode_back,
)
from ._hooks import _install_globals, _remove_globals
from ._lineage import Lineage
from ._modules import Modules
from ._ops import _C_INPLACE, _FCODE, _P, _SKIP, _T, _classify, _is_compiling
from torch.nn import Module as _M
from torch.optim import Optimizer as _OPT
from ._optim import Optim
from ._refs import Identity
from ._saved import Saved
from ._sink import Sink
from ._module_facts import ModuleFacts
from ._sync import Sync


class Mode(TorchFunctionMode):
    """The TorchFunctionMode a recording pushes: thin, it holds one reference, the recorder's call component
    (as torch's FlopCounterMode facade holds its ``_FlopCounterMode``), and hands each call to it: what
    passes straight through, what is another kind of call (``Calls._other_call``), what is recorded
    (``Calls._record``). It is the frame the user's call enters: the call component's ``sys._getframe``
    depths count it (handing over through one more method would cost a Python frame per traced op)."""

    def __init__(self, rec, calls):
        super().__init__()
        self.rec = rec  # the Recorder it belongs to
        self.calls = calls

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        calls = self.calls
        # (property reads and PyTorch's private writes: straight through, one frame. .grad reads are not in
        # _SKIP: they are watched while some .grad is cleared since backward filled it, see Calls._grad_read,
        # and they can warn, see _WARNS. Inside optimizer.step() its writes are summarised when it ends)
        if not calls.on or calls.in_opt or func in _SKIP or _is_compiling():
            return func(*args, **kwargs)
        code = _FCODE.get(func)
        if code is None:
            code = _classify(func)
        if code > _C_INPLACE:  # profiler markers, grad-mode switches, backward calls
            return calls._other_call(code, func, args, kwargs)
        return calls._record(code, func, args, kwargs)


class Recorder:
    """The engine behind :func:`gradscope.trace` (use the facade, not this): it builds the components,
    pushes their mode, and starts and stops the recording.

    Components, each owning its state (see the package docstring): ``sink`` (the trace's data),
    ``identity``, ``modules``, ``calls``, ``saved``, ``lineage``, ``optim``, ``backward``, ``facts``,
    ``syncer``. The global hooks (``_active._dispatch``) call the recorder's ``_module_pre``,
    ``_module_post``, ``_module_registered``, ``_param_registered`` and ``_optimizer_step``, bound here
    to the components that handle them."""

    def __init__(self, *, max_events: int | None = None, steps: int | None = None, eager_compile: bool = False):
        self._eager_compile = eager_compile
        self._max_events = max_events
        self._stance = None
        sink = self.sink = Sink()
        self.data, self.events, self.tensors = sink.data, sink.events, sink.tensors
        self._note, self._internal, self._guard = sink.note, sink.internal, sink.guard
        # components (each owns its state; what one needs of another is handed to it here)
        self.identity = ident = Identity(sink, self)
        self.tid_of, self.note_requires_grad = ident.tid_of, ident.note_requires_grad
        self.saved = saved = Saved(sink, ident.refs, ident.tid_of)
        self.optim = optim = Optim(sink, self, saved)
        self._optimizer_step = optim.step  # (the global optimizer hook calls it)
        self.backward = bw = Backward(sink, self, saved, steps, ident.grad_of)
        self.modules = mods = Modules(sink, self, ident, eager_compile)
        self._module_pre, self._module_post = mods._module_pre, mods._module_post  # (the global hooks call these)
        self._module_registered, self._param_registered = mods._module_registered, mods._param_registered
        self.lineage = lin = Lineage(sink, self, ident.refs, mods.raws)
        ident.bind_lineage(lin)
        self.facts = facts = ModuleFacts(sink, self)
        self.syncer = syncer = Sync(sink, self, bw, saved, lin, facts)
        self.sync, self.live, self.record_exception = syncer.sync, syncer.live, syncer.record_exception
        self.calls = calls = Calls(sink, self, ident, mods, saved, lin, bw, max_events=max_events,
                                   eager_compile=eager_compile)
        self._full = calls._full
        self.mode = Mode(self, calls)
        self._stopped = False  # stop() ran: nothing more is recorded (see Sync._drop_recording_state)
        self.entry = None
        self._names_frame = None  # the frame whose variables name the tensors asked about (see variable_name)
        self.opt_vars: list = []  # (variable, weakref) of the optimizers in the names frame (see name_by_place)
        self._var_names: dict | None = None  # at stop: tid -> that frame's variable for it
        self._var_params: dict = {}  # at stop: id(parameter the trace had not seen) -> (its variable, its mark)
        self.var_modules: dict = {}  # at stop, until the module facts are taken: id -> (module, its variable)
        self._suspended = False  # taken off the mode stack during optimizer.step()
        self._leave_pending = False  # recording ended (steps=/max_events=): leave at the next chance
        self._left_stack = False  # off the mode stack for good
        self._left_hooks = False  # out of the global hooks

    # --- lifecycle -------------------------------------------------------------------------
    def start(self, entry_frame, names_frame=None):
        """Record until :meth:`stop`. ``entry_frame``: the user's frame the trace covers (stacks stop there);
        ``names_frame``: the frame whose variables name the tensors asked about (the entry frame by default)."""
        self.entry = entry_frame
        self.modules.begin(entry_frame)
        self._names_frame = names_frame if names_frame is not None else entry_frame
        _install_globals()
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self)
        self.calls.on = True
        self.data.meta.update(torch=torch.__version__, python=sys.version.split()[0])
        if self._eager_compile:
            self._force_eager()
        self.mode.__enter__()

    def _force_eager(self):
        """eager_compile=True: torch.compile'd functions run their own Python code eagerly while recording,
        so their ops are seen at the user's lines (numerics of an optimizing backend may differ slightly)."""
        try:
            self._stance = torch.compiler.set_stance("force_eager")
        except Exception as e:  # (an old torch without stances)
            self._internal(e)
            self._note("eager_compile=True needs torch.compiler.set_stance (torch>=2.6): compiled code ran compiled")
            return
        self.data.meta["eager_compile"] = True
        self._note("torch.compile'd code ran eagerly during this trace (eager_compile=True): its ops are recorded at "
                   "the user's own lines")

    def set_in_optimizer(self, on: bool) -> None:
        """Inside optimizer.step() (its calls pass through unrecorded: see Optim) or out of it."""
        self.calls.in_opt = on

    def _resume(self):
        """Back on the mode stack after optimizer.step() (or when its closure runs the model)."""
        if self._suspended:
            self._suspended = False
            if not self._left_stack:
                push_function_mode(self.mode)

    # --- stopping means stopping: steps= / max_events= reached ----------------------------------
    def _limit_reached(self):
        """Recording ends here; the recorder leaves the mode stack and its global hooks as soon as it
        is outside its own handler (where the mode is stashed), so the rest of the block runs plain."""
        self.calls.on = False
        self._leave_pending = True

    def _off_stack(self):
        """Take this recorder off the torch-function mode stack for good, wherever it is on it (modes
        pushed above it stay, in their order). False when it is not there: inside its own handler."""
        if self._left_stack:
            return True
        if self._suspended:  # (already off, around optimizer.step())
            self._suspended = False
            self._left_stack = True
            return True
        n = _stack_len()
        i = n - 1
        while i >= 0 and _stack_at(i) is not self.mode:
            i -= 1
        if i < 0:
            return False
        above = [pop_function_mode() for _ in range(n - 1 - i)]
        pop_function_mode()
        for m in reversed(above):
            push_function_mode(m)
        self._left_stack = True
        return True

    def _leave(self):
        """Off the mode stack and out of the global hooks (see _limit_reached)."""
        if not self._off_stack():
            return  # (pending: at the next module call)
        self._leave_pending = False
        stack = getattr(_local, "stack", [])
        if self in stack:
            stack.remove(self)
        if not self._left_hooks:
            self._left_hooks = True
            _remove_globals()

    def stop(self):
        if self._stance is not None:
            stance, self._stance = self._stance, None
            try:
                stance.__exit__(None, None, None)
            except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
                self._internal(e)
        try:
            cur = current_function_modes()
            if self._left_stack:  # the recording ended early (steps=/max_events=): already off the stack
                pass
            elif self._suspended:  # optimizer.step() raised: the mode is already off the stack
                self._suspended = False
            elif cur and cur[-1] is self.mode:
                self.mode.__exit__(None, None, None)
            else:  # someone pushed a mode inside our block and did not pop it: pop ours anyway
                self._pop_out_of_order()
        finally:
            self.calls.on = False
            self._leave_pending = False
            stack = getattr(_local, "stack", [])
            if self in stack:
                stack.remove(self)
            if not self._left_hooks:
                self._left_hooks = True
                _remove_globals()
            if self.identity.deferred:
                self._guard(self.identity.resolve_deferred)  # (needs the entry frame: before it is let go)
            self.entry = None
            self.modules.end()
            self._guard(self._read_names)
            self._guard(self.facts.sync_live)  # (a failure of ours here must not raise out of the user's block)
            try:
                self.identity.release_params()
            except Exception as e:  # a failure of ours must not reach the user's program: noted (_internal)
                self._internal(e)
                self.identity.drop_held()  # and no strong reference may stay on the user's tensors
            self.syncer.stopped()  # the per-event conversion is left to the first query (sync)
            self._stopped = True

    # --- the facade's surface (gradscope.trace uses these, nothing private) ---------------------
    @property
    def is_recording(self) -> bool:
        return self.calls.on

    def pause(self) -> "_Pause":
        """A context manager: nothing is recorded inside it (the facade's own queries)."""
        return _Pause(self)

    def tensor_id(self, t, *, register: bool = False):
        """The trace-local id of tensor ``t``, or None when the trace never saw it. ``register``: a
        parameter of a called model that no call used gets its id (and its module path) now."""
        tid = self.tid_of(t)
        if tid is None and register:
            tid = self.identity.tid(t, link=False)
        return tid

    def variable_name(self, t) -> str | None:
        """The user's variable for tensor ``t`` in the frame that entered the trace (``tr.why(x)`` -> "x"):
        read when the recording stopped (or now, while it records); None when no variable holds it."""
        if self._var_names is None:
            f = self._names_frame
            return _names_in(f, t) if f is not None else None
        tid = self.tid_of(t)
        if tid is not None and tid in self._var_names:
            return self._var_names[tid]
        hit = self._var_params.get(id(t))
        if hit is not None and _mark(t) == hit[1]:
            return hit[0]
        return None

    def name_unnamed(self, t, name: str) -> None:
        """Name tensor ``t`` ``name`` when the recording gave it none (the watch knows every parameter's path)."""
        tid = self.tid_of(t)
        if tid is not None and not self.tensors[tid].name:
            self.tensors[tid].name = name

    def record_caught(self) -> None:
        """The block ended without an exception: a backward error its code caught is the failure (Sync.record_caught;
        a failure of ours here is noted, never raised)."""
        self._guard(self.syncer.record_caught)

    def internal_error(self, e: BaseException) -> None:
        """A failure of gradscope's own that must not reach the user's program: noted in the trace."""
        self._internal(e)

    def _read_names(self):
        """At stop: the variables of the names frame (locals, then globals; public names, the first one
        wins) for the tensors the trace saw, and for parameters it had not seen (asked about later)."""
        f, self._names_frame = self._names_frame, None
        names: dict = {}
        params: dict = {}
        mods: dict = {}  # the modules in those variables (their plain containers are looked at: _containers)
        self._var_names, self._var_params, self.var_modules = names, params, mods
        self.opt_vars = []  # (variable, weakref) of the optimizers in the names frame: see name_by_place
        if f is None:
            return
        tid_of = self.tid_of
        g = f.f_globals
        # (a module-level frame's locals are its globals: read once; a function frame's f_locals is not read here)
        module_level = not f.f_code.co_flags & _CO_OPTIMIZED and f.f_locals is g
        for scope in ((list(g.items()),) if module_level else (_frames.locals_of(f).items(), list(g.items()))):
            for k, v in _frames.pairs_of_types(scope, (_T, _M, _OPT)):  # (nothing else is read)
                if isinstance(v, _OPT):
                    if not k.startswith("_"):
                        self.opt_vars.append((k, weakref.ref(v)))
                    continue
                if k.startswith("_") or not isinstance(v, _T):
                    if isinstance(v, _M) and not k.startswith("_"):
                        mods.setdefault(id(v), (v, k))
                    continue
                tid = tid_of(v)
                if tid is not None:
                    names.setdefault(tid, k)
                elif isinstance(v, _P) and id(v) not in params:
                    params[id(v)] = (k, _mark(v))
        # the block's own variables for tensors the recording named otherwise (a loop variable `p` of a comprehension
        # over `(w1, w2, w3)`): what a diagnosis can call them where the recorded names coincide
        other = {str(t): n for t, n in names.items() if self.tensors.get(t) is not None and self.tensors[t].name != n}
        if other:
            self.data.meta["frame_names"] = other
        called = self.modules.mod_path
        for v, k in list(mods.values()):  # a model the step never called (a target network): `target.fc.weight`
            if v in called:
                continue
            try:
                for pn, p in v.named_parameters():
                    if id(p) not in params:
                        params[id(p)] = (f"{k}.{pn}", _mark(p))
            except Exception as e:  # a user's module whose named_parameters() raises: its parameters stay unnamed
                self._internal(e)

    def name_by_place(self):
        """Parameters nothing else named, held by an optimizer of the names frame: by their place in it
        (``opt.param_groups[0]['params'][2]``: a head replaced after the optimizer was built). At stop, after every
        other naming; only when such a parameter exists."""
        tens = self.tensors
        if not self.opt_vars or all(tens[t].name is not None for t in self.identity.param_tids if t in tens):
            return
        for var, ref in self.opt_vars:
            opt = ref()
            if opt is None:
                continue
            try:
                for gi, g in enumerate(opt.param_groups):
                    for pi, p in enumerate(g["params"]):
                        info = tens.get(self.tid_of(p))
                        if info is not None and info.name is None and info.role == "param":
                            info.name = f"{var}.param_groups[{gi}]['params'][{pi}]"
            except Exception as e:  # (an optimizer whose param_groups is not the usual list of dicts)
                self._internal(e)

    def _pop_out_of_order(self):
        above = []
        cur = current_function_modes()
        while cur and cur[-1] is not self.mode:
            above.append(pop_function_mode_above())
            cur = current_function_modes()
        if cur:
            self.mode.__exit__(None, None, None)
        for m in reversed(above):
            push_function_mode_back(m)
        self.data.unseen.append("another TorchFunctionMode was still active when the trace ended")


class _Pause:
    """``Recorder.pause()``: recording off inside, back on after (if it was on); one query of the facade (its
    syncs read which tensors are alive once, see Sync.queries)."""

    __slots__ = ("rec", "was")

    def __init__(self, rec):
        self.rec = rec
        self.was = False

    def __enter__(self):
        calls = self.rec.calls
        self.was, calls.on = calls.on, False
        self.rec.syncer.queries += 1
        return self

    def __exit__(self, *exc):
        syncer = self.rec.syncer
        syncer.queries -= 1
        if not syncer.queries:
            syncer.end_query()
        if self.was:
            self.rec.calls.on = True
        return False


_CO_OPTIMIZED = 0x0001  # (a function's code: its frame's f_locals is a snapshot, see _frames.locals_of)


def _names_in(frame, t) -> str | None:
    """The first public variable of ``frame`` (locals, then globals) that holds ``t``."""
    for scope in (_frames.locals_of(frame), frame.f_globals):
        for k, v in scope.items():
            if v is t and not k.startswith("_"):
                return k
    return None


def _mark(t):
    """What tells a tensor from a later one at the same id without a reference on it."""
    try:
        return (t.data_ptr(), tuple(t.shape))
    except (RuntimeError, ValueError):  # (no storage, or no shape)
        return None


_frames.mark_internal(
    Mode.__torch_function__.__code__, Calls._pre.__code__, Calls._post.__code__,
    Calls._grad_mode.__code__, Backward.run.__code__, Backward._pre.__code__,
    Calls._record.__code__, Calls._other_call.__code__,
)
