"""Test helpers: assert that every trainable parameter gets a usable gradient.

>>> import torch
>>> from torch import nn
>>> model = nn.Linear(3, 1)
>>> def step():
...     model(torch.randn(4, 3)).pow(2).mean().backward()
>>> tr = assert_gradients_flow(model, step)
"""
from __future__ import annotations

import fnmatch
import textwrap

import gradscope

__all__ = ["assert_gradients_flow"]


def _excluded(name: str, patterns) -> bool:
    return any(name == p or name.startswith(p + ".") or fnmatch.fnmatchcase(name, p) for p in patterns)


def assert_gradients_flow(model, step, *, exclude=(), allow_zero=False, verify=True):
    """Run ``step()`` under :func:`gradscope.trace` and check ``model``'s gradients.

    ``step`` is a callable doing forward + backward (maybe an optimizer step and a
    ``zero_grad()`` after it: gradients cleared after their consumers read them count as
    received, by the trace's evidence). Every parameter of ``model`` with
    ``requires_grad=True`` must end with a finite gradient that is not all zeros
    (``allow_zero=True`` accepts zeros). ``exclude`` holds parameter names, module
    prefixes (``"head"`` covers ``head.weight``) or glob patterns (``"*.bias"``).

    Gradients are reset to None before ``step()`` runs, so a stale gradient from an
    earlier step cannot hide a cut. On failure raises AssertionError naming each bad
    parameter with gradscope's explanation (cause, line, fix); returns the Trace
    otherwise. If ``step()`` raises, the exception propagates with gradscope's
    diagnosis attached as a note. ``verify``: before failing, re-run ``step()`` with each candidate cut undone
    (:meth:`gradscope.Trace.verify`), so that each explanation in the message says what the re-run proved.
    """
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad and not _excluded(n, exclude)]
    for _, p in params:
        p.grad = None
    with gradscope.trace() as tr:  # an exception from step() leaves with the trace's diagnosis as a note
        step()
    grads = {name: p.grad for name, p in params}
    if verify and any(g is None or not bool(g.isfinite().all()) or (not allow_zero and not bool(g.any()))
                      for g in grads.values()):
        try:
            tr.verify(step)
        except gradscope.GradscopeError:  # (a step that cannot be re-run: the explanations stand unverified)
            pass
        for name, p in params:  # (verify put the state back; the gradients checked are the step's own)
            p.grad = grads[name]
    bad = []
    for name, p in params:
        g = p.grad
        if g is None:
            status = "is None"
        elif not bool(g.isfinite().all()):
            status = "is not finite (inf/nan)"
        elif not allow_zero and not bool(g.any()):
            status = "is all zeros"
        else:
            continue
        expl = _explain(tr, p, name)
        if (g is None or status == "is all zeros") and not isinstance(expl, str) and expl.cause == "ok":
            continue  # cleared by zero_grad() after its consumers read it (the trace's evidence): fine
        bad.append((name, status, expl))
    if bad:
        groups = _by_cause(bad)
        causes = f" ({len(groups)} causes)" if len(groups) > 1 else ""
        lines = [f"gradients do not flow to {len(bad)} of {len(params)} trainable parameters "
                 f"of {type(model).__name__}{causes}:"]
        for members, why in groups:
            lines.append(textwrap.fill(_members_line(members), width=100, initial_indent="- ",
                                       subsequent_indent="  ", break_on_hyphens=False))
            if why:
                lines.append(textwrap.indent(why, "    "))
        raise AssertionError("\n".join(lines))
    return tr


def _by_cause(bad):
    """One group per explanation: parameters whose gradients fail for the same cause at the same
    line with the same fix (up to their own names) share it, in the order they were found."""
    groups: dict = {}
    for name, status, expl in bad:
        if isinstance(expl, str):  # gradscope could not explain it
            key = (name,)
        else:
            own = [n for n in {name, expl.target} if n]
            fix = expl.fix
            for n in sorted(own, key=len, reverse=True):
                fix = fix.replace(n, "\0")
            key = (expl.cause, expl.site.short if expl.site else None, fix, status)
        groups.setdefault(key, []).append((name, status, expl))
    return [([(n, st) for n, st, _ in g], str(g[0][2]) if g[0][2] is not None else "") for g in groups.values()]


def _members_line(members) -> str:
    """"fc1.weight.grad is None" for one; "fc1.weight, fc1.bias: .grad is None" for a group."""
    if len(members) == 1:
        name, status = members[0]
        return f"{name}.grad {status}"
    return ", ".join(n for n, _ in members) + f": .grad {members[0][1]} (one cause, explained for {members[0][0]})"


def _explain(tr, p, name):
    """gradscope's Explanation for ``p`` (by tensor, else by name), or a one-line note why not."""
    try:
        return tr.why(p)
    except gradscope.GradscopeError:
        try:
            return tr.why(name)
        except gradscope.GradscopeError as e:
            return f"(gradscope: {e})"
