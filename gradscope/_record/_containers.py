"""Modules kept in plain Python containers: a list, tuple or dict attribute of a module holding modules, which
``parameters()``, ``.to()``, ``.double()``, ``state_dict()`` and every optimizer built from ``parameters()`` never
see. Taken at stop from the live modules the trace knows (the models it saw called and the modules in the
variables of the frame that entered it), into ``data.meta["plain_containers"]``."""
from __future__ import annotations

import weakref

import torch.nn as nn

from ..core import _source
from . import _frames

#: the attributes every nn.Module has (its registries and hooks): never a user's container
_MODULE_ATTRS = frozenset(vars(nn.Module()))
_PLAIN = (list, tuple, dict)


def _members(v):
    items = v.items() if isinstance(v, dict) else enumerate(v)
    return [(k, x) for k, x in items if isinstance(x, nn.Module)]


def _assigned_at(cls, attr):
    """The Frame of the line of ``cls`` (or a user base of it) that assigns ``self.<attr>``, or None."""
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        code = getattr(init, "__code__", None)
        if code is None or _frames.category(code) != _frames.USER:
            continue
        hit = _source.assignment_in_class(code.co_filename, klass.__name__, attr)
        if hit is not None:
            line, text = hit
            return [code.co_filename, line, f"{klass.__name__}.__init__", text]
    return None


_USER_CLASS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # class -> _user_class(class), asked once


def _user_class(cls) -> bool:
    """A class whose ``__init__`` is the user's (library modules keep their modules registered: not looked at)."""
    hit = _USER_CLASS.get(cls)
    if hit is None:
        hit = _USER_CLASS[cls] = _is_user_class(cls)
    return hit


def _is_user_class(cls) -> bool:
    for klass in cls.__mro__:
        code = getattr(vars(klass).get("__init__"), "__code__", None)
        if code is not None:
            return _frames.category(code) == _frames.USER
    return False


def scan(root, name, into: list, seen: set, internal, mods=None) -> None:
    """Append to ``into`` the plain containers of ``root`` (called ``name``) and of its submodules of the user's
    classes: owner (a name), class, attr, kind, the line that assigned it (a Frame as JSON, or None) and its
    members (key, class, weak references to their parameters: tids are taken at stop, :func:`resolved`).
    ``seen``: ids of the modules already looked at in this trace; ``mods``: ``root.named_modules()`` when the
    caller walked it already."""
    if id(root) in seen:
        return
    try:
        subs = mods if mods is not None else list(root.named_modules())
    except Exception as e:  # a user's module whose named_modules() raises: nothing to say about it
        internal(e)
        return
    users: dict = {}  # (one question per class: most models are a few classes many times)
    for path, m in subs:
        cls = type(m)
        user = users.get(cls)
        if user is None:
            user = users[cls] = _user_class(cls)
        if not user or id(m) in seen:
            continue
        seen.add(id(m))
        for attr, v in vars(m).items():
            if attr in _MODULE_ATTRS or type(v) not in _PLAIN or not v:
                continue
            members = _members(v)
            if not members:
                continue
            entry = {"owner": f"{name}.{path}" if path else name, "class": cls.__name__, "attr": attr,
                     "kind": type(v).__name__, "site": _assigned_at(cls, attr), "members": []}
            for key, sub in members:
                try:
                    refs = [weakref.ref(p) for p in sub.parameters()]
                except Exception as e:
                    internal(e)
                    refs = []
                entry["members"].append({"key": str(key), "class": type(sub).__name__, "params": refs})
            into.append(entry)
    seen.add(id(root))


def resolved(entries: list, tid_of) -> list:
    """The entries as JSON: each member's parameters as the tids the trace gave them (those it saw)."""
    out = []
    for e in entries:
        members = []
        for mem in e["members"]:
            tids = [tid_of(p) for p in (r() for r in mem["params"]) if p is not None]
            members.append(dict(mem, params=[t for t in tids if t is not None]))
        out.append(dict(e, members=members))
    return out
