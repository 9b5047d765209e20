"""Modules kept in a plain Python list, tuple or dict (status `received` and `failure`): not
registered, so ``parameters()``, ``.to()``/``.double()``, ``state_dict()`` and every optimizer built from
``parameters()`` never see them. The cause is the line that stored them (fix: ``nn.ModuleList``/``nn.ModuleDict``),
whatever showed it: a parameter no optimizer holds, an optimizer given an empty parameter list, ``backward(inputs=
model.parameters())`` given nothing, a dtype or device mismatch inside one of those layers."""
from __future__ import annotations

import re

from ..core.model import Cause, Frame, Site
from . import templates_containers as say  # noqa: F401  (registers the wording the findings here name)
from .finding import found
from .registry import rule

#: messages a plain container explains: those that say parameters() gave nothing, and dtype/device mismatches
EMPTY = re.compile(r"optimizer got an empty parameter list|`inputs` argument to `backward\(\)` cannot be empty")
MISMATCH = re.compile(r"must have the same dtype|expected scalar type|Expected all tensors to be on the same device|"
                      r"is not on the expected device|Input type \(.*\) and (?:weight|bias) type \(.*\) should be the same|"
                      r"expected m1 and m2 to have the same dtype|found at least two devices", re.S)


def _site(c):
    """The line that stored the container, as a Site (None when its source was not found)."""
    f = c.get("site")
    if not f:
        return None
    fr = Frame.from_json(f)
    return Site(fr.filename, fr.lineno, fr.function, fr.code, (fr,))


@rule("received", 25)
def plain_container(dx, q):
    """A parameter of a layer kept in a plain list or dict of its model, that no optimizer holds."""
    hit = dx.container_of(q.tid)
    if hit is None or q.tid in dx.trainable:
        return None
    c, m = hit
    return found(Cause.UNREGISTERED_CONTAINER, _site(c), q.name, "plain_container", q.name, c, m, bool(dx.trainable))


@rule("failure", 105)
def plain_container_error(dx, q):
    """An error a plain container explains: parameters() gave nothing (an optimizer or backward(inputs=) got an
    empty list), or a layer in it met a dtype/device it was never converted to."""
    cs = dx.plain_containers()
    if not cs:
        return None
    e = dx.error_event()
    if EMPTY.search(q.msg):
        c = cs[0]
    elif MISMATCH.search(q.msg) and e is not None:
        hits = [dx.container_of(r.tid) for r in e.inputs]
        hits = [h for h in hits if h is not None]
        if not hits:
            return None
        c = hits[0][0]
    else:
        return None
    x = dx.d.exception
    return found(Cause.UNREGISTERED_CONTAINER, _site(c), "the step", "plain_container_error", c,
                 (e.site if e else None) or x.site, x.message.splitlines()[0][:200] if x.message else "",
                 evidence=[e] if e else [])
