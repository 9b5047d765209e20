"""Names of modules and parameters, for the recording layer (no modes, no hooks; reads live objects).

The recorder calls this when a module tree is first entered and at sync, never per op:
- :func:`walk` lists a model's modules and tensors by the path the user knows: torch's wrappers
  (DistributedDataParallel's ``module``, torch.compile's ``_orig_mod``, FSDP, checkpoint wrappers)
  add nothing to a path, and a parametrized tensor (``parametrizations.weight.original``) is
  named as the attribute the user reads (``weight``).
- :func:`find_root` finds the user's variable for a called module (or for the model holding it):
  a local, an attribute of the calling object (``self.encoder``), an element of a plain list or
  dict (``layers.0``), a module global, or a caller's local.
- :func:`attr_name` names a tensor the user passed by attribute (``m.scale``, ``cfg.temperature``).

>>> import torch.nn as nn
>>> seq = nn.Sequential(nn.Linear(2, 2))
>>> [p for p, _ in walk(seq)[1]]
['0.weight', '0.bias']
"""
from __future__ import annotations

import os
import sys
from itertools import repeat as _repeat
from operator import is_ as _is

import torch
import torch.nn as nn

from ._compat import TORCH_DIR, module_buffers, module_children, module_parameters
from ._frames import GS_DIR, STDLIB_DIR, first_user_frame, locals_of, pairs_of_types

__all__ = ["walk", "unwrap", "find_root", "attr_name", "join"]

# the attribute under which a torch wrapper keeps the module it runs
_WRAPPED = frozenset({"module", "_orig_mod", "_fsdp_wrapped_module", "_checkpoint_wrapped_module"})
_Module = nn.Module


def join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix and name else (prefix or name)


def _wrapped(m):
    """The module a torch wrapper (DDP, DataParallel, compile's OptimizedModule, FSDP) runs, else None.
    Only classes defined by torch itself: a user's ``self.module`` keeps its name."""
    mods = module_children(m)
    if len(mods) != 1 or not type(m).__module__.startswith("torch."):
        return None
    (name, c), = mods.items()
    return c if name in _WRAPPED and isinstance(c, _Module) else None


def unwrap(m):
    """The user's model inside any number of torch wrappers."""
    for _ in range(8):
        inner = _wrapped(m)
        if inner is None:
            break
        m = inner
    return m


def flat(m) -> bool:
    """A root whose own names would read badly without its variable: no children (``weight``), or
    numbered ones only (nn.Sequential / ModuleList: ``0.weight``)."""
    kids = list(module_children(unwrap(m)).keys())  # (.keys(): a ScriptModule's _modules has no __iter__)
    return not kids or any(k[:1].isdigit() for k in kids)


def walk(root):
    """``(modules, tensors)`` of ``root`` in ``named_modules`` order: ``[(path, module)]`` (each module
    once) and ``[(path, tensor)]`` for parameters then buffers of each module, every occurrence (tied
    weights appear under each name; the first is the parameter's name)."""
    mods, tens = [], []
    seen = set()
    stack = [("", root)]
    budget = 1 << 20  # (a module shared at two paths is walked under each: its tied tensors)
    while stack and budget > 0:
        budget -= 1
        path, m = stack.pop()
        if id(m) not in seen:
            seen.add(id(m))
            mods.append((path, m))
        for n, p in module_parameters(m).items():
            if p is not None:
                tens.append((join(path, n), p))
        for n, b in module_buffers(m).items():
            if b is not None:
                tens.append((join(path, n), b))
        kids = []
        inner = _wrapped(m)
        for n, c in module_children(m).items():
            if c is None:
                continue
            if c is inner:
                kids.append((path, c))  # the wrapper's module: same path
            elif n == "parametrizations" and isinstance(c, nn.ModuleDict):
                for pn, plist in module_children(c).items():
                    ppath = join(path, pn)
                    for on, orig in module_parameters(plist).items():  # original -> weight; original0 -> weight.original0
                        if orig is not None:
                            tens.append((ppath if on == "original" else join(ppath, on), orig))
                    for on, orig in module_buffers(plist).items():
                        if orig is not None:
                            tens.append((ppath if on == "original" else join(ppath, on), orig))
                    kids.append((join(path, f"parametrizations.{pn}"), plist))
            else:
                kids.append((join(path, n), c))
        stack.extend(reversed(kids))
    return mods, tens


def contains(big, m) -> bool:
    try:
        return any(x is m for x in big.modules())
    except (AttributeError, TypeError, RuntimeError):  # (a module whose modules() is broken or overridden)
        return False


def _size(m) -> int:
    try:
        return sum(1 for _ in m.modules())
    except (AttributeError, TypeError, RuntimeError):  # (as in contains)
        return 0


_SCANNED = (_Module, list, tuple, dict)


def _scan(items, module, public=False):
    """The best name for ``module`` among ``(name, value)`` pairs: ``(score, name, root)`` or None.
    A module holding it (the largest) names it as part of that model; an element of a plain list,
    tuple or dict (``layers.2``) beats a direct variable (a loop variable rebound each step)."""
    best = None
    for k, v in pairs_of_types(items, _SCANNED):  # (the rest can neither be nor hold a module)
        if k == "self" or (public and k.startswith("_")) or not isinstance(k, str):
            continue
        cand = None
        if isinstance(v, _Module):
            if v is module:
                cand = (1.0, k, v)
            elif module_children(v) and contains(v, module):
                cand = (1.0 + _size(v), k, v)
        elif type(v) in (list, tuple) and 0 < len(v) <= 4096:
            for i, x in enumerate(v):
                if x is module:
                    cand = (1.5, f"{k}.{i}", x)
                    break
        elif type(v) is dict and 0 < len(v) <= 4096:
            for dk, x in v.items():
                if x is module and isinstance(dk, (str, int)):
                    cand = (1.5, f"{k}.{dk}", x)
                    break
        if cand is not None and (best is None or cand[0] > best[0]):
            best = cand
    return best


def _attrs(obj) -> list:
    try:
        d = vars(obj)
    except TypeError:
        return []
    return [(k, v) for k, v in d.items() if not k.startswith("_")]


def find_root(f, stop, module, path_of):
    """``(var, root)``: the user's variable for ``module`` called from user frame ``f`` and the module
    it names (``module`` or a model that holds it); var is None when no variable is visible.
    ``path_of(m)`` is the recorder's path of a module already named (None if unknown)."""
    if f is None:
        return None, module
    loc = locals_of(f)  # a copy: never keep the user's locals alive
    hit = _scan(loc.items(), module)
    if hit is not None:
        return hit[1], hit[2]
    owner = loc.get("self")
    if owner is not None:
        if isinstance(owner, _Module) and contains(owner, module):
            # called from a method of a bigger module (pinn.residual(...) calls self.net(x)): the
            # caller's variable for that module names the model
            return outer_var_of(f, stop, owner), owner
        hit = _scan(_attrs(owner), module, public=True)  # self.encoder of a trainer; self.layers = [...]
        if hit is not None:
            base = path_of(owner) if isinstance(owner, _Module) else None
            return join(base, hit[1]) if base else hit[1], hit[2]
    try:
        g = f.f_globals
        hit = _scan(list(g.items()), module, public=True) if g is not loc else None
    except (AttributeError, TypeError, RuntimeError):  # (globals whose values cannot be inspected)
        hit = None
    if hit is not None:
        return hit[1], hit[2]
    return outer_var_of(f, stop, module), module


def outer_var_of(f, stop, obj):
    from ._frames import outer_var

    return outer_var(callers(f, stop), stop, obj, public=True)


def callers(f, stop):
    """The user frame that called user frame ``f`` (None at the traced block's own frame)."""
    return first_user_frame(f.f_back, stop) if f is not stop else None


def attr_name(f, stop, t, frames: int = 4, memo: dict | None = None):
    """``var.attr`` for tensor ``t`` reached through an object in the user's frames (``m.scale``,
    ``cfg.temperature``, ``model.fc1.weight``), else None. For leaves that no variable names.

    ``memo``: a dict the caller keeps for a stretch in which the user's frames and objects cannot
    change (one ``Optimizer.zero_grad()``: every parameter it clears is first seen there, and each
    would otherwise walk every model and scan every namespace in reach again). It keeps what the search has read of each object, so a later search is a few lookups."""
    if f is None:
        return None
    if memo is None:
        for k, v in _candidates(f, stop, frames):
            hit = _holding(k, v, t)
            if hit is not None:
                return hit
        return None
    key = (id(f), id(stop), frames)
    got = memo.get(key)
    if got is None or got[0] is not f or got[1] is not stop:
        # (the candidates are listed as the search reaches them: most searches end at the first model)
        got = memo[key] = (f, stop, _Listed(_candidates(f, stop, frames)))
    for c in got[2]:
        kind = c[2]
        if kind is _NONE:
            continue
        k, v, _, data = c
        if kind is None:  # (read when the search first reaches it)
            kind, data = c[2], c[3] = _read(v)
        if kind is _MODEL:  # {id(tensor): (tensor, its first path in the model's walk)}
            e = data.get(id(t))
            if e is not None and e[0] is t:
                return f"{k}.{e[1]}"
        elif kind is _TENSORS:  # the tensors among the values of its vars() (None: not a plain dict); _NONE: none
            if data is None or any(x is t for x in data):
                a = _attr_holding(v, t)
                if a is not None:
                    return f"{k}.{a}"
        elif kind is _FAILED:  # (reading it raised: searched as without a memo, raising here if it raises)
            hit = _holding(k, v, t)
            if hit is not None:
                return hit
    return None


_MODEL, _TENSORS, _NONE, _FAILED = "model", "tensors", "none", "failed"


class _Listed:
    """attr_name's memo of the candidates of one frame: ``[name, object, kind, data]`` entries, taken from
    the candidates' generator as far as a search has gone (a later search goes on from there)."""

    __slots__ = ("items", "_more")

    def __init__(self, gen):
        self.items: list = []
        self._more = gen

    def __iter__(self):
        items = self.items
        yield from items
        more = self._more
        if more is None:
            return
        for k, v in more:  # (a search that stops early leaves the rest for the next one)
            c = [k, v, None, None]
            items.append(c)
            yield c
        self._more = None


_CO_OPTIMIZED = 0x0001  # (a function's code; a module-level frame's f_locals is its globals)
_IS_TENSOR = torch.Tensor.__instancecheck__  # (C: type.__instancecheck__)


def _candidates(f, stop, frames):
    """The ``(name, object)`` pairs attr_name searches, in its order: the locals of user frame ``f`` and
    up to ``frames - 1`` callers (never beyond ``stop``), then ``f``'s globals; each object once (a
    module-level frame's locals are its globals), no ``self``, no ``_private`` names."""
    scopes = []
    g = f.f_globals
    while f is not None and frames > 0:
        # (a module-level frame of these globals: its locals are them, None here; see below)
        scopes.append(None if not f.f_code.co_flags & _CO_OPTIMIZED and f.f_locals is g else locals_of(f).items())
        frames -= 1
        if f is stop:
            break
        f = first_user_frame(f.f_back, stop)
    if scopes and scopes[-1] is None:
        scopes.pop()  # (last before the globals, which yield the same names in the same order)
    scopes = [list(g.items()) if s is None else s for s in scopes]
    scopes.append(list(g.items()))
    done = set()
    for items in scopes:
        for k, v in items:
            if not isinstance(k, str) or k.startswith("_") or k == "self":
                continue
            if id(v) in done:
                continue
            done.add(id(v))
            yield k, v


_ModuleType = type(sys)
_LIBRARY: dict = {}  # id(module object) -> (it, whether it is a library's: see _library_module)


def _library_module(v) -> bool:
    """Is ``v`` a module object of torch, gradscope or the standard library (built-in ones included)?
    attr_name does not search their namespaces (``torch``: ~1500 attributes, read at every trace whose
    model is a global): a user's tensor is never named ``torch.x``. A user's own module (``cfg.scale``,
    a file outside those) is searched like any object. Answered once per module object."""
    hit = _LIBRARY.get(id(v))
    if hit is not None and hit[0] is v:
        return hit[1]
    try:
        fn = v.__dict__.get("__file__")
        if isinstance(fn, str):
            fn = os.path.abspath(fn)
            lib = fn.startswith((GS_DIR, TORCH_DIR)) or (
                fn.startswith(STDLIB_DIR) and "site-packages" not in fn and "dist-packages" not in fn)
        else:  # (no file: a built-in module such as sys or time, else a namespace package: the user's)
            lib = v.__dict__.get("__name__") in sys.builtin_module_names
    except Exception:  # (an odd module object: searched as before)
        lib = False
    _LIBRARY[id(v)] = (v, lib)  # (keeps the module object alive, so that its id is not reused)
    return lib


def _holding(k, v, t):
    """``k.<path>`` when object ``v`` (named ``k``) holds tensor ``t``: a model's tensor by its module
    path, else a public attribute; None otherwise."""
    if isinstance(v, _Module):
        for path, x in walk(v)[1]:
            if x is t:
                return f"{k}.{path}"
    elif type(v) is _ModuleType and _library_module(v):
        return None
    elif not isinstance(v, type) and hasattr(v, "__dict__"):
        a = _attr_holding(v, t)
        if a is not None:
            return f"{k}.{a}"
    return None


def _read(v):
    """What attr_name's memo keeps of object ``v``: ``(kind, data)``."""
    try:
        if isinstance(v, _Module):
            first: dict = {}
            for path, x in walk(v)[1]:
                if id(x) not in first:
                    first[id(x)] = (x, path)
            return _MODEL, first
        if isinstance(v, type) or not hasattr(v, "__dict__") or (type(v) is _ModuleType and _library_module(v)):
            return _NONE, None
        try:
            d = vars(v)
        except TypeError:  # (no vars(): it holds nothing, as _attr_holding finds)
            return _NONE, None
        if type(d) is not dict:
            return _TENSORS, None
        ts = list(filter(_IS_TENSOR, d.values()))
        return (_TENSORS, ts) if ts else (_NONE, None)
    except Exception:
        return _FAILED, None


def _attr_holding(obj, t):
    """The first public attribute of ``obj`` (in :func:`_attrs` order) whose value is ``t``, else None.
    A global namespace holds imported packages (a user's own module may have many attributes; those of
    torch and the standard library are not searched, see _library_module): the values are compared by
    identity in C first, and only an object that holds ``t`` is walked in Python."""
    try:
        d = vars(obj)
    except TypeError:
        return None
    if type(d) is dict and not any(map(_is, d.values(), _repeat(t))):
        return None
    for a, x in _attrs(obj):
        if x is t:
            return a
    return None


def constructing(f, stop, module, frames: int = 3) -> bool:
    """Is user frame ``f`` part of ``module``'s own ``__init__`` (directly or through a helper method)?
    Replacing a submodule or parameter there builds the model; nothing can hold the old one yet."""
    while f is not None and frames > 0:
        if f.f_code.co_name == "__init__" and locals_of(f).get("self") is module:
            return True
        frames -= 1
        if f is stop:
            break
        f = first_user_frame(f.f_back, stop)
    return False


def compiler_made(m) -> bool:
    """A torch.fx GraphModule (what torch.compile's backends build and call)."""
    fx = sys.modules.get("torch.fx")
    return fx is not None and isinstance(m, fx.GraphModule)


def is_argument(f, name: str) -> bool:
    """Is ``name`` one of the arguments of the function running in frame ``f``?"""
    co = f.f_code
    return name in co.co_varnames[:co.co_argcount + co.co_kwonlyargcount]
