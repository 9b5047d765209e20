"""Wording of what a verification found (:mod:`.verified`): one pure function per outcome, data in, text out."""
from __future__ import annotations

from ..core.verification import FAILURE

__all__ = ["verified_text", "pair_text", "no_single_text", "untried_text", "not_a_cut_text", "not_repeatable_text",
           "replaced_summary", "replaced_detail", "replaced_fix"]

_WHAT = {
    "detach": "`.detach()`", "data": "`.data`", "numpy": "NumPy round trip", "item": "`.item()` round trip",
    "tolist": "`.tolist()` round trip", "rewrap": "re-wrap", "region": "no-grad region",
    "requires_grad": "freeze", "grad_set": "gradient clear", "inplace": "in-place write", "data_set": "`.data =`",
}
_FIX = {
    "detach": "use the tensor itself instead of its `.detach()` on line {line} where the result should train {t}.",
    "data": "use the tensor itself instead of `.data` on line {line} where the result should train {t}.",
    "numpy": "keep line {line}'s computation in torch (torch ops instead of NumPy) so that the graph reaches {t}.",
    "item": "keep the tensor instead of its `.item()` value on line {line} where it should train {t}.",
    "tolist": "keep the tensor instead of its `.tolist()` values on line {line} where they should train {t}.",
    "rewrap": "use the tensor itself instead of re-wrapping it on line {line}.",
    "region": "move the computation that should train {t} out of the no-grad region opened on line {line}.",
    "requires_grad": "do not freeze {t} on line {line} (or unfreeze it before this backward).",
    "grad_set": "clear gradients on line {line} before backward, not between backward and the optimizer step.",
    "inplace": "make the write on line {line} out of place (`y = f(x)` instead of modifying x).",
    "data_set": "do not replace the values through `.data =` on line {line} before backward.",
}


def _what(u) -> str:
    return _WHAT.get(u.kind, u.kind)


def _got(target, result) -> str:
    if target == FAILURE:
        return "backward succeeds"
    if result is not None and result.norm is not None:
        return f"{target}.grad has norm {result.norm:.3g}"
    return f"{target}.grad arrives"


def verified_text(target, u, code, result, others=()) -> str:
    """Undoing ``u`` alone restored ``target`` (and so did undoing each of ``others``)."""
    s = f"verified: with line {u.lineno}'s {_what(u)} undone (`{code}`), {_got(target, result)}."
    if others:
        s += " Undoing " + ", or ".join(f"line {o.lineno}'s {_what(o)}" for o in others[:3]) + " alone does too."
    return s


def pair_text(target, a, b, result, n_single) -> str:
    return (f"verified as a pair: no single undo of the {n_single} tried restored it; with both line {a.lineno}'s "
            f"{_what(a)} and line {b.lineno}'s {_what(b)} undone, {_got(target, result)}.")


def no_single_text(target, refuted, untried) -> str:
    lines = ", ".join(f"line {u.lineno}'s {_what(u)}" for u in refuted[:6])
    s = f"not verified: undoing each of {len(refuted)} cuts ({lines}) did not restore it"
    if untried:
        s += f"; {len(untried)} could not be undone ({untried[0][1]})"
    return s + "."


def untried_text(untried) -> str:
    if not untried:
        return "not verified: the trace holds no cut on its way that a re-run could undo."
    u, why = untried[0]
    return f"not verified: line {u.lineno}'s {_what(u)}: {why}."


def not_a_cut_text(cause) -> str:
    what = f"{cause} is not a cut" if cause else "the trace named no cut here"
    return f"not verified: {what} that a re-run can undo (the explanation stands as the trace shows it)."


def not_repeatable_text(reason) -> str:
    return f"cannot verify: the step is not repeatable ({reason})."


def replaced_summary(target, status, u, short, old_short, refuted) -> str:
    what = "backward failed" if target == FAILURE else f"{target}.grad is {status}"
    first = (f"; the trace first pointed to {old_short}, but undoing that did not fix it" if refuted else
             f"; the trace first pointed to {old_short}" if old_short else "")
    return f"{what}: the {_what(u)} at {short} is the cut that matters (the re-run proves it){first}."


def replaced_detail(n_tried) -> str:
    if n_tried <= 1:
        return "gradscope re-ran the step with this cut undone, and that changed the outcome."
    return (f"gradscope re-ran the step with each of {n_tried} candidate cuts undone, one at a time; undoing this "
            "one changed the outcome.")


def replaced_fix(u, target) -> str:
    return _FIX.get(u.kind, "change line {line}.").format(line=u.lineno, t=target or "the parameters")
