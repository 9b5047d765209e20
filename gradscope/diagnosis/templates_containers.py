"""Templates of :mod:`.rules_containers`: layers kept in a plain list, tuple or dict of their model."""
from __future__ import annotations

from .wording import _at, _code, said, words


_UNREGISTERED = ("nn.Module registers a layer assigned as an attribute, or held in nn.ModuleList/nn.ModuleDict; layers "
                 "inside a plain list or dict are invisible to parameters(), .to(), .double(), state_dict() and "
                 "train().")


def _held(c) -> str:
    kind = {"list": "a plain Python list", "tuple": "a plain tuple", "dict": "a plain Python dict"}.get(c["kind"], "a plain container")
    return f"`{c['owner']}.{c['attr']}` is {kind}"


def _stored(c) -> str:
    f = c.get("site")
    return f" (stored at {f[0].rsplit('/', 1)[-1]}:{f[1]}: `{f[3]}`)" if f else ""


def _container_fix(c) -> str:
    wrap = "nn.ModuleDict" if c["kind"] == "dict" else "nn.ModuleList"
    return (f"hold the layers in an `{wrap}` (`self.{c['attr']} = {wrap}(...)`): registered, they are in parameters(), "
            "move with .to()/.double(), are saved by state_dict() and trained by an optimizer built from parameters().")


@words("plain_container")
def plain_container_text(name, c, m, optimizers):
    """plain_container (unregistered_container): ``name`` belongs to the member ``m`` of the container ``c``, and no
    optimizer holds it (``optimizers``: the trace saw optimizers hold other parameters)."""
    why = ("so the optimizer built from parameters() does not hold it: it never changes" if optimizers else
           "so parameters() (an optimizer, clipping, a hand-written update over it) never sees it")
    summary = said(f"{name} is not registered in its model",
                   f"{_held(c)}{_stored(c)}, and the {m['class']} at [{m['key']}] sits in it; {why}.")
    detail = _UNREGISTERED
    return summary, detail, _container_fix(c)


@words("plain_container_error")
def plain_container_error_text(c, site, message):
    """plain_container_error (unregistered_container): the error ``message`` raised at ``site``, explained by the
    plain container ``c``."""
    summary = said(f"the step failed{_at(site)}{_code(site)}",
                   f"{message.rstrip('.')}. {_held(c)}{_stored(c)}: the layers in it are not registered, so "
                   "parameters() does not give their parameters, and .to()/.double() never converted them.")
    detail = _UNREGISTERED
    return summary, detail, _container_fix(c)
