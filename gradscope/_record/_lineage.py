"""Value lineage: values that left autograd (``.item()``, ``.numpy()``) and came back as new
tensors, and tensors re-wrapped by something the mode cannot see.

``Lineage`` owns what it matches against (escaped values, arrays that went through NumPy, recent
results); the call recorder adds to them as it records and asks it about each new tensor.
"""
from __future__ import annotations

import collections
import linecache as _linecache
import re
import sys

import torch

from . import _frames
from ._norms import _Own
from ._ops import _floats, context_of
from ._records import Array, RawEvent, Recent
from ._refs import _pk


class Lineage:
    """Links a tensor first seen without a producer to where its values came from (a cut, or an
    ``external`` event)."""

    def __init__(self, sink, engine, refs: dict, raws: dict):
        self._events = sink.events
        self._engine = engine  # the recorder: its entry frame and current module
        self._refs = refs  # the identity's tid -> reference map (read only)
        self._raws = raws  # interned call stacks (shared with the frame walk)
        self.values: dict = {}  # escaped python float -> event index
        self.arrays: list = []  # [Array] that went through NumPy
        self.recent = collections.deque(maxlen=64)  # Recent tuples: recent results (with history or detached)

    def forget(self):
        """After the recording's conversion (in place: the call recorder holds them)."""
        self.values.clear()
        self.recent.clear()

    def link_alias(self, t, info):
        """A tensor first seen without a producer that shares memory with a recent result that has
        history: re-wrapped by something the mode cannot see (torch.autograd.Variable(t),
        torch.Tensor(t), Tensor._make_subclass). That is a cut."""
        try:
            ptr = t.data_ptr()
        except (RuntimeError, ValueError):  # a tensor without storage (ValueError: an uninitialized lazy one)
            return False
        if not ptr:
            return False
        for a in self.arrays:
            if a.ptr <= ptr < a.ptr + max(a.nbytes, 1):
                return False  # memory that went through NumPy: torch.from_numpy (_link_external)
        n = len(self._events)
        for rec in map(Recent._make, reversed(self.recent)):
            htid, hrg = rec.tid, rec.has_history
            if rec.ptr == ptr and htid != info.tid:
                # the same address can be reused by a new allocation: trust the match only while the
                # original is alive, or for a fresh leaf made right after the original
                r = self._refs.get(htid)
                alive = r is not None and r() is not None
                if not alive and not (t.requires_grad and rec.numel == t.numel() and rec.event >= n - 3):
                    return False
                idx = len(self._events)
                info.producer = idx
                raw, flags = _frames.walk(sys._getframe(), self._engine.entry)
                raw = self._rewrap_line(raw, t)
                self._events.append(RawEvent(idx, "cut", "re-wrap (torch.autograd.Variable / torch.Tensor(t))", raw,
                                         (_pk(htid, hrg, not hrg),), (_pk(info.tid, t.requires_grad, True),),
                                         torch.is_grad_enabled(), False, self._engine.modules.current_module(), context_of(flags, True),
                                         "rewrap", {"inferred": "memory"}))
                return True
        return False

    def _rewrap_line(self, raw, t):
        """The re-wrap is noticed where the new tensor is first used; if the user's variable for it was
        assigned a few lines above by a re-wrapping call (`feats = Variable(feats, requires_grad=True)`),
        that line is the site."""
        if not raw:
            return raw
        f = _frames.first_user_frame(sys._getframe(), self._engine.entry)
        if f is None or id(f.f_code) != raw[0][0]:
            return raw
        name = next((k for k, v in _frames.locals_of(f).items() if v is t), None)
        if name is None:
            return raw
        pat = re.compile(r"\s*%s\s*=[^=].*\b(Variable|Tensor|FloatTensor|_make_subclass|Parameter)\(" % re.escape(name))
        lo = f.f_code.co_firstlineno
        for ln in range(raw[0][1] - 1, max(lo, raw[0][1] - 30) - 1, -1):
            text = _linecache.getline(f.f_code.co_filename, ln)
            if pat.match(text):
                if ".data" in text or ".detach(" in text or ".numpy(" in text:
                    return raw  # (that line's own cut is recorded there and explains it)
                new = ((raw[0][0], ln),) + tuple(raw[1:])
                return self._raws.setdefault(new, new)
        return raw

    def link_external(self, t, info):
        """A tensor first seen without a producer: did it come back from NumPy (shared memory,
        else same shape), or from escaped Python numbers (legacy torch.Tensor([...]))?"""
        try:
            ptr = t.data_ptr()
        except (RuntimeError, ValueError):  # a tensor without storage (ValueError: an uninitialized lazy one)
            return
        link, how, op = None, None, "torch.from_numpy"
        for a in reversed(self.arrays):
            if a.ptr <= ptr < a.ptr + max(a.nbytes, 1):
                link, how = a.event, "memory"
                break
        if link is None:
            for a in reversed(self.arrays):
                if tuple(a.shape) == info.shape:
                    link, how = a.event, "shape"
                    break
        if link is None and self.values and t.numel() <= 256 and t.dtype.is_floating_point:
            try:
                with _Own():
                    vals = t.detach().flatten().tolist()
            except (RuntimeError, NotImplementedError):  # values that cannot be read (meta, a subclass)
                vals = ()
            for v in vals:
                e = self.values.get(v)
                if e is not None:
                    link, how, op = e, "value", "torch.Tensor(...)"
                    break
        if link is None:
            return
        idx = len(self._events)
        raw, flags = _frames.walk(sys._getframe(), self._engine.entry)
        self._events.append(RawEvent(idx, "external", op, raw, (), (_pk(info.tid, False, True),),
                                 torch.is_grad_enabled(), False, self._engine.modules.current_module(), "user", None,
                                 {"links": [link], "inferred": how}))
        info.producer = idx

    # --- value lineage ---------------------------------------------------------------------
    def escape(self, idx, func, out, ins):
        if type(out) in (float, int, bool) and type(out) is not bool:
            self.values[float(out)] = idx
        elif type(out) is list:
            for v in _floats(out, []):
                self.values[v] = idx
        elif hasattr(out, "__array_interface__"):
            try:
                ai = out.__array_interface__
                self.arrays.append(Array(ai["data"][0], out.nbytes, tuple(out.shape), idx))
                if len(self.arrays) > 256:
                    del self.arrays[:128]
            except (AttributeError, KeyError, TypeError):  # an array-like without a usable __array_interface__
                pass
        if len(self.values) > 200_000:
            self.values.clear()

    def reentry(self, idx, args, detail):
        """A tensor built from Python data (``torch.tensor(...)``, ``torch.as_tensor(...)``): linked to the calls whose
        values left autograd, by the NumPy arrays passed (their memory, else their shape: an array computed from
        one that left) or by the Python floats in them."""
        if self.arrays:
            links, how = self._array_links(args)
            if links:
                detail["links"] = links[:8]
                detail["inferred"] = how
                return
        if not self.values:
            return
        vals = _floats(args, [], budget=2048)
        if not vals:
            return
        links = []
        get = self.values.get
        for v in vals:
            e = get(v)
            if e is not None and e not in links:
                links.append(e)
        if links:
            detail["links"] = links[:8]
            detail["inferred"] = "value"

    def _array_links(self, args):
        """(events, how) of the arrays that left autograd among the NumPy arrays in ``args`` (top level, or in a
        list or tuple): by shared memory, else by shape."""
        arrs = []
        stack = list(args)
        while stack and len(arrs) < 16:
            x = stack.pop()
            tx = type(x)
            if tx is list or tx is tuple:
                stack.extend(x[:64])
            elif hasattr(x, "__array_interface__") and tx.__module__ == "numpy":
                arrs.append(x)
        links, how = [], "memory"
        for x in arrs:
            try:
                ptr = x.__array_interface__["data"][0]
            except (AttributeError, KeyError, TypeError):
                continue
            for a in reversed(self.arrays):
                if a.ptr <= ptr < a.ptr + max(a.nbytes, 1):
                    if a.event not in links:
                        links.append(a.event)
                    break
        if not links:
            how = "shape"
            for x in arrs:
                for a in reversed(self.arrays):
                    if tuple(a.shape) == tuple(x.shape):
                        if a.event not in links:
                            links.append(a.event)
                        break
        return links, how
