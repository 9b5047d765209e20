"""The public facade: ``gradscope.trace()`` and the :class:`Trace` it returns.

>>> import torch, gradscope
>>> lin = torch.nn.Linear(3, 2)
>>> with gradscope.trace() as tr:
...     h = lin(torch.randn(4, 3))
...     loss = torch.from_numpy(h.detach().numpy()).sum() + lin.bias.sum()
...     loss.backward()
>>> tr.why(lin.weight).cause
'numpy_roundtrip'
"""
from __future__ import annotations

import collections
import contextlib
import difflib
import functools
import os
import re
import sys
import threading

from . import diagnosis
from .errors import GradscopeError, UnknownTargetError
from .core.explanation import Explanation, StepSummary
from .core.model import TraceData

__all__ = ["trace", "Trace", "load"]

_KEEP_CALLS = 8  # finished calls of a decorated function kept on ``fn.traces``


def trace(*, max_events: int | None = None, steps: int | None = None, eager_compile: bool = False) -> "Trace":
    """Record a training step: every torch call with its user line, grad-mode switches,
    ``requires_grad`` changes, in-place writes, and what each backward delivered.

    Use as a context manager (``with gradscope.trace() as tr:``) or a decorator
    (``@gradscope.trace()``: each call records a fresh trace, so threads and recursion are
    safe; the latest finished call's trace is ``fn.last_trace``, the last few ``fn.traces``). ``steps=N`` stops recording after N
    backward calls; ``max_events`` caps the number of recorded events.

    Inside ``torch.compile``'d code the trace shows the lines of the frames torch.compile traced
    (``backend="eager"``); backends that compile the backward too (``aot_eager``, ``inductor``)
    hide them, and gradscope then judges only from the gradients that arrived. ``eager_compile=True``
    runs compiled functions eagerly while recording (``torch.compiler.set_stance("force_eager")``,
    for every thread), so every op is seen at its own line; an optimizing backend's results may
    differ slightly from the compiled run.
    """
    return Trace(max_events=max_events, steps=steps, eager_compile=eager_compile)


class Trace:
    """A recorded step. Live while the tensors exist; plain data after :func:`load`."""

    def __init__(self, *, max_events=None, steps=None, eager_compile=False, data: TraceData | None = None,
                 source: str | None = None):
        self._opts = dict(max_events=max_events, steps=steps, eager_compile=eager_compile)
        self._rec = None  # the live recorder (gradscope._record.Recorder) while/after recording
        self._data = data
        self._source = source
        self._diag = None
        self._diag_len = -1
        self._verification = None  # what verify() found (gradscope.core.verification.Verification)
        self._step = None  # (fn, args, kwargs) of a decorated call: what verify() re-runs by default

    # --- recording -------------------------------------------------------------------------
    def __enter__(self) -> "Trace":
        self._start_at(sys._getframe(1))
        return self

    def __exit__(self, et, ev, tb):
        rec = self._stop()
        if ev is None:
            rec.record_caught()
        if ev is not None and not isinstance(ev, (SystemExit, GeneratorExit)):
            try:
                rec.record_exception(ev)
            except Exception as e:  # never mask the user's exception
                rec.internal_error(e)
            if isinstance(ev, Exception):
                try:
                    exp = self.failure
                    if exp is not None and exp.cause != "unknown" and hasattr(ev, "add_note"):
                        ev.add_note("gradscope: " + str(exp).replace("\n", "\n  "))
                except Exception as e:  # never mask the user's exception
                    rec.internal_error(e)
        return False

    def _start_at(self, frame, names_frame=None) -> None:
        """Start recording; ``frame`` is the user's frame that the trace covers (the ``with`` block's,
        or for a trace started by gradscope.watch, the outermost user frame); ``names_frame``: the frame
        whose variables name the tensors asked about (``frame`` by default)."""
        if self._rec is not None and self._rec.is_recording:
            raise GradscopeError("this trace is already recording; use a new gradscope.trace() to nest traces")
        from ._record import Recorder  # torch is needed to record, not to read a saved trace

        self._rec = Recorder(**self._opts)
        self._data = None
        self._diag = None
        self._rec.start(frame, names_frame)

    def _stop(self):
        rec = self._rec
        rec.stop()
        return rec

    def __call__(self, fn):
        """``@gradscope.trace()``: every call of ``fn`` records into a fresh Trace of its own, so
        calls from several threads, or recursive calls, each get a whole trace and never collide.

        After a call ends, its Trace is ``fn.last_trace`` (the latest call to finish, in any
        thread) and the last few are ``fn.traces`` (oldest first); the decorating Trace itself
        (``fn.gradscope_trace``) then shows that latest finished call too.
        """
        opts = dict(self._opts)
        lock = threading.Lock()
        recent: collections.deque = collections.deque(maxlen=_KEEP_CALLS)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            tr = Trace(**opts)
            tr._step = (fn, args, kwargs)
            try:
                # (its entry frame is this wrapper: the stack starts at the decorated function; the caller's
                # variables name the tensors asked about)
                tr._start_at(sys._getframe(0), sys._getframe(1))
                try:
                    out = fn(*args, **kwargs)
                except BaseException as e:
                    tr.__exit__(type(e), e, e.__traceback__)
                    raise
                tr.__exit__(None, None, None)
                return out
            finally:
                with lock:
                    recent.append(tr)
                    wrapper.last_trace = tr
                    if not self.recording:  # (unless it is also in use as a context manager)
                        self._rec, self._data, self._diag = tr._rec, tr._data, None

        wrapper.gradscope_trace = self
        wrapper.last_trace = None
        wrapper.traces = recent
        return wrapper

    # --- data ----------------------------------------------------------------------------------
    @property
    def data(self) -> TraceData:
        """The recording as plain data (synced with the live recorder)."""
        if self._rec is not None:
            self._rec.sync()
            return self._rec.data
        if self._data is None:
            raise GradscopeError("this trace has not recorded anything yet: use it as `with gradscope.trace() as tr:`")
        return self._data

    @property
    def events(self) -> list:
        """Every recorded event, in order (plain data)."""
        return self.data.events

    @property
    def recording(self) -> bool:
        """Whether the trace records now (inside its block, before ``steps=`` / ``max_events=`` ended it)."""
        return self._rec is not None and self._rec.is_recording

    @property
    def ended(self) -> bool:
        """The recording stopped early (``steps=`` or ``max_events=`` reached) while the block goes on."""
        return self._rec is not None and self._rec.data.truncated

    def _paused(self):
        """Our own queries must not be recorded (nor change the recording) while a trace is live."""
        return self._rec.pause() if self._rec is not None else contextlib.nullcontext()

    # --- the watch's surface: gradscope.watch traces the step after an alert through these alone ------
    def _note_freeze(self, p, lines=(), flags: int = 0, step=None) -> None:
        """Record a freeze of ``p`` the watch saw before this trace started, as if the trace had seen it
        (``lines``: the frame walk of the line that froze it; empty when only its effect was seen)."""
        self._rec.note_requires_grad(p, False, lines, flags, step)

    def _name_unnamed(self, t, name: str) -> None:
        """Name ``t`` in this trace when the recording gave it no name."""
        self._rec.name_unnamed(t, name)

    def _why_recorded(self, t) -> Explanation | None:
        """Why ``t.grad`` is what this trace recorded (not what the tensor holds now: DDP may have written it
        since); None when the trace never saw ``t``."""
        tid = self._rec.tensor_id(t)
        return None if tid is None else self._diagnosis().why(tid, None)

    def _diagnosis(self):
        d = self.data
        if self._diag is None or self._diag_len != len(d.events):
            self._diag = diagnosis.Diagnosis(d)
            self._diag_len = len(d.events)
        return self._diag

    def cuts(self, *, harmful: bool | None = None) -> list:
        """The step's cuts (``.detach()``, ``.data``, round trips, no-grad regions, freezes...) as events with
        their verdicts; ``harmful=True`` only those that starve something, ``False`` only the harmless ones."""
        with self._paused():
            return self._cuts_impl(harmful=harmful)

    def _live_facts(self, diag) -> dict:
        """The live facts (see _now) of the parameters, the tensors asked about and the leaves that require grad."""
        now = {}
        for t in list(self.data.tensors.values()):
            if t.role == "param" or t.tid in diag.query_tids or (t.is_leaf and t.requires_grad):
                n = self._now(t.tid)
                if n is not None:
                    now[t.tid] = n
        return now

    def _cuts_impl(self, *, harmful: bool | None = None) -> list:
        """Events that cut or endanger gradient flow, each with ``.verdict`` "harmful" or "benign".
        ``harmful=True`` keeps only the harmful ones."""
        diag = self._diagnosis()
        cuts = diag.cuts(self._live_facts(diag))  # (the summary's facts: a verdict never depends on what was asked first)
        verdicts = self._fill_verdicts(diag)
        if harmful is None:
            return cuts
        return [e for e in cuts if (verdicts[e.index] == "harmful") == harmful]

    def _fill_verdicts(self, diag) -> dict:
        """The diagnosis' verdicts on cuts, also set as each event's ``.verdict`` (the public attribute; None on
        the others)."""
        verdicts = diag.verdicts()
        for e in self.data.events:
            e.verdict = verdicts.get(e.index)
        return verdicts

    # --- explanations --------------------------------------------------------------------------
    def _now(self, tid):
        """Facts about the live tensor, read now (its .grad may have changed since backward)."""
        if self._rec is None:
            return None
        import torch

        from ._record import grad_status
        from ._record._quiet import _Quiet

        t = self._rec.live(tid)
        if t is None:
            return None
        with _Quiet():  # (not catch_warnings: it would make warnings already shown once show again)
            g = t.grad if t.is_leaf or t.retains_grad else None
        st, nm = grad_status(g)
        return {"status": st, "norm": nm, "requires_grad": t.requires_grad, "is_leaf": t.is_leaf,
                "retains_grad": t.retains_grad, "is_param": isinstance(t, torch.nn.Parameter)}

    def resolve(self, target) -> int:
        """The trace-local id of a tensor or name; raises UnknownTargetError."""
        d = self.data
        torch = _torch()
        if torch is not None and isinstance(target, torch.Tensor):
            rec = self._rec
            if rec is None:
                raise UnknownTargetError(f"a loaded trace holds no tensors: ask by name, e.g. {_examples(d)}")
            tid = rec.tensor_id(target)
            if tid is None and isinstance(target, torch.nn.Parameter):
                tid = rec.tensor_id(target, register=True)  # (a parameter of a called model that no call used: its path)
                rec.sync()
            if tid is None:
                shape = list(target.shape)
                raise UnknownTargetError(
                    f"this tensor (shape {shape}, dtype {str(target.dtype).replace('torch.', '')}) was never seen by "
                    "the trace: it was not used by any torch call inside the `with gradscope.trace()` block. "
                    "Pass a tensor used in the traced step, or a name such as "
                    f"{_examples(d)}."
                )
            return tid
        if isinstance(target, int) and not isinstance(target, bool) and target in d.tensors:
            return target
        if isinstance(target, str):
            names = {}
            in_model = set(d.meta.get("model_tensors") or ())
            aliases = d.meta.get("name_aliases") or {}

            def rank(t):  # a model's tensor first (not one that left it: a weight replaced by a tied one), then
                return (t.tid in in_model, t.role == "param")  # parameters; otherwise the latest of that name

            for t in d.tensors.values():
                if t.name and (names.get(t.name) is None or rank(t) >= rank(d.tensors[names[t.name]])):
                    names[t.name] = t.tid
            if target in names and not (target in aliases and aliases[target] in d.tensors
                                        and rank(d.tensors[aliases[target]]) > rank(d.tensors[names[target]])):
                return names[target]
            if target in aliases and aliases[target] in d.tensors:  # a module path with or without its root
                return aliases[target]
            if self._diag is not None:
                for tid, alias in self._diag.aliases.items():
                    if alias == target:
                        return tid
            m = _LABEL.match(target)  # an unnamed tensor as the report shows it: "t12"
            if m and int(m.group(1)) in d.tensors and not d.tensors[int(m.group(1))].name:
                return int(m.group(1))
            norm = target.replace("[", ".").replace("]", "").replace("'", "").replace('"', "")
            for want in dict.fromkeys((target, norm)):  # "model.fc1.weight" -> "fc1.weight", "layers[0]" -> "layers.0"
                if want in names:
                    return names[want]
                hits = [tid for n, tid in names.items() if want.endswith("." + n) or n.endswith("." + want)]
                if len(hits) == 1 or (hits and len({d.tensors[t].name for t in hits}) == 1):
                    return hits[0]
                if len(hits) > 1:
                    opts = ", ".join(repr(d.tensors[t].name) for t in hits[:6])
                    raise UnknownTargetError(f"{target!r} is ambiguous in this trace: it could be {opts}. "
                                             "Pass the full name.")
            close = difflib.get_close_matches(target, list(names) + list(aliases), n=5, cutoff=0.4)
            hint = f" Closest known names: {', '.join(close)}." if close else f" Known names include {_examples(d)}."
            raise UnknownTargetError(f"no tensor named {target!r} in this trace.{hint}")
        raise UnknownTargetError(
            f"cannot explain a {type(target).__name__}: pass a tensor or Parameter seen by the trace, or its name"
        )

    def why(self, target) -> Explanation:
        """Why is ``target.grad`` what it is? ``target``: a tensor/Parameter or a recorded name.

        A tensor the trace recorded no name for is called by the variable that held it in the code that
        ran the ``with`` block (``tr.why(x)`` -> "x").

        Returns an :class:`~gradscope.Explanation` with cause, site, summary, detail, fix, path.
        """
        return self._why(target)

    def _why(self, target, name: str | None = None) -> Explanation:
        """``why(target)``; ``name``: what to call an unnamed tensor target (else its variable, see why)."""
        with self._paused():
            tid = self.resolve(target)
            diag = self._diagnosis()
            torch = _torch()
            if (torch is not None and isinstance(target, torch.Tensor) and not self.data.tensors[tid].name
                    and tid not in diag.aliases):
                name = name or (self._rec.variable_name(target) if self._rec is not None else None)
                if name:
                    diag.aliases[tid] = name
            return self._checked(diag.why(tid, self._now(tid)))

    def _checked(self, exp, names=()):
        """``exp`` as the verification (if any) left it (``names``: the parameters it stands for, in a summary)."""
        if self._verification is None or exp is None:
            return exp
        from .diagnosis.verified import apply
        from ._verify import undo_sites

        return apply(exp, self._verification, undo_sites(self._diagnosis(), self._verification.trials), names)

    def verify(self, step=None, *args, budget_s: float | None = 120.0, max_trials: int = 24, **kwargs):
        """Test each explanation by experiment: re-run ``step(*args, **kwargs)`` once per candidate cut on the way
        to each starved or failing target, with that cut undone (a ``.detach()``/``.data`` keeps the graph, a
        NumPy/``.item()`` round trip is joined straight-through to its source, a no-grad region runs with grad,
        a freeze or a gradient clear is skipped, an in-place write goes to a copy), restoring the state verify
        started from before each run and after the last (parameters, buffers, gradients, optimizers that
        stepped, RNG states). First an unmodified re-run must reproduce the recorded flow, else nothing is
        claimed ("not repeatable"). Afterwards ``why``, ``problems``, the report and JSON name the verified cut.

        ``step`` defaults to a decorated function's own call (``fn.last_trace.verify()``). The re-run repeats the
        user's code: its prints, files and other Python state are the user's. ``budget_s``: stop starting
        re-runs after this many seconds (what was not tried is counted in ``skipped``). Returns the
        :class:`~gradscope.core.verification.Verification`."""
        if self.recording:
            raise GradscopeError("verify() re-runs the step: call it after the `with gradscope.trace()` block ends")
        if self._rec is None:
            raise GradscopeError("a loaded trace cannot be verified: verify() re-runs the step, which needs the live "
                                 "trace (call tr.verify(step, *args) right after recording)")
        if step is None:
            if self._step is None:
                raise GradscopeError("verify() needs the step to re-run: tr.verify(step, *args, **kwargs) "
                                     "(a function decorated with @gradscope.trace() remembers its own)")
            step, args, kwargs = self._step
        if not callable(step):
            raise GradscopeError(f"verify() re-runs a callable step; got a {type(step).__name__}")
        from ._verify import verify

        self._verification = None
        v = verify(self, step, args, kwargs, sys._getframe(1), budget_s=budget_s, max_trials=max_trials)
        self._verification = v
        return v

    @property
    def verification(self):
        """What :meth:`verify` found (None before it ran)."""
        return self._verification

    @property
    def failure(self) -> Explanation | None:
        """Explanation of the exception the traced block raised, else None."""
        with self._paused():
            d = self.data
            if d.exception is None:
                return None
            return self._checked(self._diagnosis().failure())

    def summary(self) -> StepSummary:
        """What the step did and what went wrong (plain data, for renderers): the parameter table, the
        problems, the failure, counts; with what a verification found, once :meth:`verify` ran."""
        with self._paused():
            return self._summary_impl()

    def _summary_impl(self) -> StepSummary:
        """What the step did and what went wrong (plain data, for renderers)."""
        diag = self._diagnosis()
        s = diag.summarize(self._live_facts(diag))
        self._fill_verdicts(diag)
        if self._verification is not None:
            def covered(p):  # the parameters one problem stands for: its cause at its line
                return [r.name for r in s.params if (r.cause, r.site) == (p.cause, p.site)]

            s.problems = [self._checked(p, covered(p)) for p in s.problems]
            s.failure = self._checked(s.failure)
            by = {p.target: p for p in s.problems}
            for row in s.params:
                p = by.get(row.name)
                if p is not None and p.verified == "verified":
                    row.cause, row.site = p.cause, p.site
        return s

    def problems(self) -> list:
        """Explanations for every problem found (starved parameters, the failure)."""
        s = self.summary()
        return list(s.problems) + ([s.failure] if s.failure else [])

    def check(self) -> None:
        """Raise AssertionError (with explanations) unless every trainable parameter used in the step got a
        finite, non-zero gradient and the step did not fail."""
        with self._paused():
            return self._check_impl()

    def _check_impl(self) -> None:
        """Raise AssertionError (with explanations) unless every trainable parameter used in
        the step got a finite, non-zero gradient and the step did not fail."""
        s = self.summary()
        probs = list(s.problems)
        if s.failure is not None:
            probs.insert(0, s.failure)
        if probs:
            text = "\n\n".join(str(p) for p in probs)
            raise AssertionError(f"gradscope: {len(probs)} gradient problem(s)\n\n{text}")

    # --- output --------------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the trace as JSON to ``path`` (schema-versioned; never pickle): ``gradscope.load`` or
        ``gradscope show`` read it back."""
        with self._paused():
            return self._save_impl(path)

    def _save_impl(self, path) -> None:
        """Write the trace as JSON (schema-versioned; never pickle)."""
        d = self.data
        v = self._verification
        d.save(path, verdicts=self._fill_verdicts(self._diagnosis()), verification=v.to_json() if v else None)

    def report(self, console=None, *, width=None) -> None:
        """Print the rich report (parameters, cuts, explanations) to the terminal, or to a rich ``console``;
        ``width``: columns (the terminal's by default)."""
        with self._paused():
            return self._report_impl(console, width=width)

    def _report_impl(self, console=None, *, width=None) -> None:
        """Print the rich report (parameters, cuts, explanations) to the terminal, or to a
        rich ``console``; ``width``: columns (the terminal's by default)."""
        from .render.report import print_report

        print_report(self.data, self.summary(), console, width=width)

    def graph(self, focus=None, **kw):
        """A :class:`~gradscope.graph.GraphView` of the step (``.render(path)`` draws it with graphviz);
        ``focus``: a tensor or name whose ancestry to show."""
        with self._paused():
            return self._graph_impl(focus, **kw)

    def _graph_impl(self, focus=None, **kw):
        """A :class:`~gradscope.graph.GraphView` of the step; ``focus`` a tensor or name."""
        from .graph import build_graph

        tid = self.resolve(focus) if focus is not None else None
        return build_graph(self.data, self.summary(), focus=tid, **kw)

    def __rich_console__(self, console, options):
        from .render.report import TraceReport

        yield TraceReport(self.data, self.summary())

    def _repr_mimebundle_(self, include=None, exclude=None):
        from .render.report import html_report

        s = self.summary()
        return {"text/html": html_report(self.data, s), "text/plain": repr(self)}

    def __repr__(self) -> str:
        if self._rec is None and self._data is None:
            return "<gradscope.Trace (not started)>"
        d = self.data
        state = "recording" if self.recording else "done"
        return f"<gradscope.Trace {state}: {len(d.events)} events, {len(d.backwards)} backward>"


def _torch():
    """torch if it is imported (a tensor can only be passed in then), else None: a loaded trace is
    read without torch."""
    return sys.modules.get("torch")


def _examples(d: TraceData) -> str:
    """A few names from this trace: parameters first, then other named tensors, then labels."""
    ts = list(d.tensors.values())
    names = [t.name for t in ts if t.name and t.role == "param"][:3]
    names = names or list(dict.fromkeys(t.name for t in reversed(ts) if t.name))[:3]
    names = names or [t.label() for t in ts[:3]]
    return ", ".join(repr(n) for n in names) if names else "none (the trace recorded no tensors)"


_LABEL = re.compile(r"t(\d+)$")


def load(path) -> Trace:
    """Load a trace saved with ``tr.save(path)`` (JSON only; never executes code)."""
    d = TraceData.load(path)
    tr = Trace(data=d, source=os.fspath(path))
    saved = d.meta.pop("verification", None)  # (what the recorded run's re-runs verified: said again)
    if isinstance(saved, dict):
        from .core.verification import Verification
        from .core.model import TraceFileError

        try:
            tr._verification = Verification.from_json(saved)
        except (KeyError, TypeError, ValueError) as e:
            raise TraceFileError(f"{os.fspath(path)}: its verification is damaged ({type(e).__name__}: {e}); "
                                 "re-save the trace, or remove meta.verification to load it without") from None
    return tr
