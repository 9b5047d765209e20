"""Interventions: a re-run of the user's step with recorded cuts undone at their call sites (see ``_replay``).

``Interventions`` is a TorchFunctionMode pushed below a fresh recording's mode (the recorder sees the user's call
first and records it; the intervention then changes what that call does). It only acts on calls whose user
frames, from the step's own frame inward, are an undo's ``key``; every other call passes straight through.
Two calls no mode sees are wrapped for the run's duration only: ``torch.from_numpy`` (the way back of a NumPy
round trip) and ``torch.inference_mode``'s entry.
"""
from __future__ import annotations

import sys

import torch
from torch.overrides import TorchFunctionMode

from . import _frames
from ._compat import DECORATED_LOCAL, DECORATED_WRAPPER, set_grad_enabled as _compat_set_grad
from ..core.verification import frame_key
from ._ops import _CONVERT, _DATA_SET, _GRAD_SET, _NAMES, _REQ, _REWRAP, _T, _name

_SET_GRAD = _compat_set_grad
_DETACH_F = {_T.detach, torch.detach}
_DATA_GET = _T.data.__get__
_ROUND_TRIP = ("numpy", "item", "tolist")
_CARRY = {"cpu", "to", "clone", "contiguous", "float", "double", "half", "flatten", "reshape", "view", "squeeze",
          "numpy", "detach", "data", "__array__", "tolist", "item", "__float__", "__getitem__", "cuda"}
_PICK_MAX = 1 << 20  # elements: arrays larger than this are not searched for picked values


def _own_call(f) -> bool:
    """Whether the torch call made from frame ``f`` is gradscope's own (the trace's stop reading a .grad): its first
    frame outside torch is gradscope's, not the user's."""
    while f is not None:
        co = f.f_code
        if co.co_filename.startswith(_frames.GS_DIR):
            return True
        if _frames.category(co) == _frames.USER:
            return False
        f = f.f_back
    return True


def _first_user(f):
    while f is not None:
        if _frames.category(f.f_code) == _frames.USER:
            return f
        f = f.f_back
    return None


class RunEnded(BaseException):
    """A verifying re-run of a script ends here: its recording reached the step that showed the problem (a
    BaseException, so that the script's own ``except Exception`` lets it through; ``gradscope run`` catches it)."""


class Interventions(TorchFunctionMode):
    """Undo ``undos`` (``gradscope.core.verification.Undo``) while the step re-runs. ``hits[i]``: how many calls
    of undo ``i`` were changed; ``joins``: round trips joined back to their source; ``errors``: why an undo could
    not be done where it ran. ``end``: a callable; once it says True, the next torch call raises :class:`RunEnded`."""

    def __init__(self, undos, step, end=None):
        super().__init__()
        self.end = end
        self.undos = list(undos)
        self.step = step  # (file, qualified name) of the step function
        self.hits = [0] * len(self.undos)
        self.joins = 0
        self.errors: list = []
        self._lines = {(u.filename, u.lineno) for u in self.undos if u.kind != "region"}
        self._regions = [u for u in self.undos if u.kind == "region"]
        self._trips = [u for u in self.undos if u.kind in _ROUND_TRIP or u.kind == "rewrap"]
        self._kinds = {u.kind for u in self.undos if u.kind != "region"}
        self._relevant: dict = {}  # func -> whether an undo of this run can be a call of it (see _KINDS_OF)
        # while the run lasts (never beyond): id -> (object, source tensor) of values that left autograd at an
        # undone round trip, and of the tensors carried there from a source that requires grad
        self._escaped: dict = {}
        self._floats: dict = {}
        self._carried: dict = {}
        self._saved_patches: list = []

    # --- lifecycle ----------------------------------------------------------------------------------
    def __enter__(self):
        if self._trips:
            self._patch(torch, "from_numpy", self._from_numpy(torch.from_numpy))
        if any(u.inference for u in self._regions):
            im = torch.autograd.grad_mode.inference_mode
            self._patch(im, "__enter__", self._inference_enter(im.__enter__))
            self._patch(im, "__exit__", self._inference_exit(im.__exit__))
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            for obj, name, old in reversed(self._saved_patches):
                setattr(obj, name, old)
            self._saved_patches.clear()
            self._escaped.clear()
            self._floats.clear()
            self._carried.clear()

    def _patch(self, obj, name, new):
        self._saved_patches.append((obj, name, obj.__dict__[name] if name in obj.__dict__ else getattr(obj, name)))
        setattr(obj, name, new)

    # --- matching -------------------------------------------------------------------------------------
    def _match(self, f, kinds):
        """The undo (index) of one of ``kinds`` whose key is the call's (made from frame ``f``), else None."""
        uf = _first_user(f)
        if uf is None or (uf.f_code.co_filename, uf.f_lineno) not in self._lines:
            return None
        raw, _ = _frames.walk(uf, None)
        site = _frames.make_site(raw)
        key = frame_key(site.stack if site is not None else (), self.step)
        for i, u in enumerate(self.undos):
            if u.kind in kinds and u.key == key:
                return i
        return None

    def _region(self, f):
        """The undo (index) of the region whose entry this grad switch is (a `with` line, or a decorated function
        whose decorator line the undo names)."""
        while f is not None:
            co = f.f_code
            if co.co_name == DECORATED_WRAPPER and DECORATED_LOCAL in f.f_locals:
                fn = getattr(f.f_locals[DECORATED_LOCAL], "__code__", None)
                if fn is not None:
                    for i, u in enumerate(self._regions):
                        if u.filename == fn.co_filename and fn.co_firstlineno <= u.lineno <= fn.co_firstlineno + 3:
                            return self.undos.index(u)
                return None
            if _frames.category(co) == _frames.USER:
                for u in self._regions:
                    if u.filename == co.co_filename and u.lineno == f.f_lineno:
                        return self.undos.index(u)
                return None
            f = f.f_back
        return None

    # --- the mode -------------------------------------------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if self.end is not None and self.end() and not _own_call(sys._getframe(1)):
            self.end = None
            raise RunEnded()
        if kwargs is None:
            kwargs = {}
        if func is _SET_GRAD:
            if self._regions and args and args[0] is False:
                i = self._region(sys._getframe(1))
                if i is not None:
                    self.hits[i] += 1
                    return None  # (grad stays as it is: enabled)
            return func(*args, **kwargs)
        if not self._lines:
            return func(*args, **kwargs)
        if func in _REWRAP:
            out = func(*args, **kwargs)
            data = args[1] if func is _T.new_tensor and len(args) > 1 else args[0] if args else kwargs.get("data")
            return self._join(data, out, func, sys._getframe(1))
        if self._floats and (args or kwargs):  # a value .item() took out, used as a number: its tensor instead
            args, kwargs = self._numbers(args), {k: self._number(v) for k, v in kwargs.items()} if kwargs else kwargs
        try:
            rel = self._relevant.get(func)
            if rel is None:
                rel = self._relevant[func] = bool(self._kinds.intersection(_KINDS_OF.get(func, _INPLACE_KINDS)
                                                                           + _ROUND_TRIP))
        except TypeError:  # (an unhashable callable)
            rel = True
        if not rel:  # (most calls: a detach's undo has nothing to do with a linear)
            return func(*args, **kwargs)
        i = self._match(sys._getframe(1), _KINDS_OF.get(func, _INPLACE_KINDS) + _ROUND_TRIP)
        if i is None:
            return func(*args, **kwargs)
        u = self.undos[i]
        k = u.kind
        if k in ("detach", "data"):
            if func is _T.detach_:
                self.hits[i] += 1
                return args[0]
            if func in _DETACH_F or func == _DATA_GET:
                self.hits[i] += 1
                t = args[0]
                return t.view_as(t)
        elif k in ("requires_grad", "grad_set", "data_set"):
            value = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
            if (k == "requires_grad" and func in _REQ and value is False) or (
                    k == "grad_set" and func == _GRAD_SET and value is None) or (k == "data_set" and func == _DATA_SET):
                self.hits[i] += 1
                return args[0] if func is _T.requires_grad_ else None
            if k == "grad_set" and _name(func).endswith(".zero_"):
                self.hits[i] += 1  # (zero_grad(set_to_none=False) zeroing each .grad)
                return args[0]
        elif k == "inplace" and (_NAMES.get(func) or _name(func)) == u.op and args and isinstance(args[0], _T):
            self.hits[i] += 1
            c = args[0].clone()
            res = func(c, *args[1:], **kwargs)
            return c if res is None or res is c or res is args[0] else res
        elif k in _ROUND_TRIP:
            return self._carry(i, func, args, kwargs)
        return func(*args, **kwargs)

    # --- round trips -----------------------------------------------------------------------------------
    def _number(self, v):
        if type(v) is float:
            src = self._floats.get(v)
            if src is not None:
                self.joins += 1
                return src
        return v

    def _numbers(self, args):
        out = None
        for j, v in enumerate(args):
            if type(v) is float and v in self._floats:
                if out is None:
                    out = list(args)
                out[j] = self._number(v)
        return tuple(out) if out is not None else args

    def _source(self, t):
        """The tensor with history that ``t`` was carried from on an undone line (``t`` itself if it has it)."""
        hit = self._carried.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        return t if isinstance(t, _T) and t.requires_grad else None

    def _carry(self, i, func, args, kwargs):
        """A call on an undone round trip's line: run it; remember where its result's values came from."""
        out = func(*args, **kwargs)
        src = self._source(args[0]) if args else None
        if src is None:
            return out
        name = _name(func).rsplit(".", 1)[-1]
        if isinstance(out, _T):
            if name in _CARRY:
                self._carried[id(out)] = (out, src)
            return out
        if func in _CONVERT:
            self.hits[i] += 1
            if type(out) is float or type(out) is int:
                self._floats[float(out)] = src.reshape(())
            elif type(out) is list:
                flat = src.reshape(-1)
                for j, v in enumerate(_flat(out, [])):
                    self._floats.setdefault(float(v), flat[j] if j < flat.numel() else None)
            elif hasattr(out, "__array_interface__"):
                self._escaped[id(out)] = (out, src)
        return out

    def _picked(self, data):
        """The source elements an array of values picked from an array that left autograd stands for
        (``q[np.arange(n), a]``, ``q[mask]``, ``np.sort(q)``): the latest escaped array holding every one of its
        values, each value taken at its first place there. None when no escaped array holds them all (values
        computed from the escaped ones, not picked)."""
        want = data.reshape(-1).tolist()
        if not want or len(want) > _PICK_MAX:
            return None
        for arr, s in reversed(list(self._escaped.values())):
            if arr.size > _PICK_MAX or s.numel() != arr.size:
                continue
            at: dict = {}
            for j, v in enumerate(arr.reshape(-1).tolist()):
                at.setdefault(v, j)
            idx = [at.get(v) for v in want]
            if None not in idx:
                return s.reshape(-1)[torch.tensor(idx, dtype=torch.long, device=s.device)]
        return None

    def _from_numpy(self, orig):
        def from_numpy(a):
            out = orig(a)
            return self._join(a, out, orig, sys._getframe(1))
        return from_numpy

    def _join(self, data, out, func, f):
        """``out`` (a tensor built from ``data``) joined straight-through to the tensor ``data``'s values left
        autograd from, on an undone round trip: ``out + (src - src.detach())``."""
        if not isinstance(out, _T) or not (self._escaped or self._floats or self._trips):
            return out
        src = None
        ts = [data] if isinstance(data, _T) else [x for x in data if isinstance(x, _T)] \
            if isinstance(data, (list, tuple)) else []
        if ts and any(t.requires_grad for t in ts):  # torch.tensor(t) of tensors with history, on an undone line
            if any(u.kind == "rewrap" for u in self._trips):
                i = self._match(f, ("rewrap",))
                if i is not None:
                    self.hits[i] += 1
                    src = ts[0] if len(ts) == 1 else torch.stack([t.reshape(-1) for t in ts]) \
                        if len({t.numel() for t in ts}) == 1 else torch.cat([t.reshape(-1) for t in ts])
        else:
            hit = self._escaped.get(id(data))
            if hit is not None and hit[0] is data:
                src = hit[1]
            elif hasattr(data, "shape") and hasattr(data, "__array_interface__"):
                # an array computed from the one that left (astype, arithmetic): by its shape, the latest; else
                # one picked out of it (fancy indexing, a mask, a sort): each value at its place in the source
                for arr, s in reversed(list(self._escaped.values())):
                    if tuple(arr.shape) == tuple(data.shape):
                        src = s
                        break
                else:
                    src = self._picked(data)
            elif self._floats:
                vals = _flat(data if isinstance(data, (list, tuple)) else [data], [])
                parts = [self._floats.get(float(v)) if isinstance(v, (int, float)) else None for v in vals]
                if parts and all(p is not None for p in parts):
                    src = torch.stack([p.reshape(()) for p in parts])
        if src is None:
            return out
        if src.numel() != out.numel() or not (out.is_floating_point() or out.is_complex()):
            self.errors.append(f"cannot undo: the values came back with {out.numel()} elements of "
                               f"{str(out.dtype).replace('torch.', '')} from {src.numel()}")
            return out
        j = src.to(out.dtype).reshape(out.shape)
        self.joins += 1
        return out + (j - j.detach())

    # --- inference_mode -----------------------------------------------------------------------------------
    def _inference_enter(self, orig):
        me = self

        def __enter__(self_):
            if getattr(self_, "mode", True):
                i = me._region(sys._getframe(1))
                if i is not None and me.undos[i].inference:
                    me.hits[i] += 1
                    self_._gradscope_undone = True
                    return None
            return orig(self_)
        return __enter__

    def _inference_exit(self, orig):
        def __exit__(self_, *exc):
            if getattr(self_, "_gradscope_undone", False):
                self_._gradscope_undone = False
                return None
            return orig(self_, *exc)
        return __exit__


def _flat(x, out):
    if isinstance(x, (list, tuple)):
        for v in x:
            _flat(v, out)
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        out.append(x)
    return out


_KINDS_OF: dict = {}
for _f in _DETACH_F | {_DATA_GET, _T.detach_}:
    _KINDS_OF[_f] = ("detach", "data")
for _f in _REQ:
    _KINDS_OF[_f] = ("requires_grad",)
_KINDS_OF[_GRAD_SET] = ("grad_set",)
_KINDS_OF[_DATA_SET] = ("data_set", "inplace")
_INPLACE_KINDS = ("inplace", "grad_set") + _ROUND_TRIP
