"""Wording apart from deciding: the text helpers and templates that turn a rule's finding (cause, site,
evidence) into a summary and a fix, filled from the user's own code and names (no scenario's names)."""
from __future__ import annotations

import re

from ..model import Event, Site
from .common import _opname, _short, statement_site


_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _as_written(e: Event) -> str:
    """How the user wrote the op: a comparison as its operator (`dist <= w` calls w.__ge__ on a Parameter),
    else ``name()``."""
    op = _opname(e).strip("_")
    if op in _CMP and e.site is not None and e.site.code:
        found = set(re.findall(r"<=|>=|==|!=|(?<![<>=!])[<>](?!=)", e.site.code.split("#")[0]))
        if len(found) == 1:
            return f"the comparison `{found.pop()}`"
        return f"a comparison ({_CMP[op]})"
    return f"{_opname(e)}()"


def _out_of_place(code: str) -> str | None:
    """The line rewritten without the in-place write: `z -= m` -> `z = z - m`, `x.add_(y)` -> `x = x.add(y)`,
    `x[mask] = 0` -> masked_fill / torch.where."""
    code = (code or "").split("  #")[0].strip()
    m = re.fullmatch(r"([A-Za-z_][\w.]*)\s*([-+*/])=\s*(.+)", code)
    if m:
        return (f"write it out-of-place: `{m.group(1)} = {m.group(1)} {m.group(2)} {m.group(3)}` (a new tensor; the "
                f"saved one stays intact).")
    m = re.fullmatch(r"([A-Za-z_][\w.]*)\.([a-z]\w*)_\((.*)\)", code)
    if m:
        return (f"write it out-of-place: `{m.group(1)} = {m.group(1)}.{m.group(2)}({m.group(3)})` (a new tensor; the "
                f"saved one stays intact).")
    m = re.fullmatch(r"([A-Za-z_][\w.]*)\[(.+)\]\s*=\s*(.+)", code)
    if m:
        x, idx, v = m.groups()
        if re.search(r"\b%s\s*\[" % re.escape(x), v):  # a shift: trans[:, 1:] = trans[:, :-1]
            return (f"build the shifted tensor out of place instead of writing `{x}` from itself: e.g. "
                    f"`{x} = torch.cat([first, {v}], dim=...)` or torch.roll.")
        mask = idx if re.search(r"[<>]=?|==|!=", idx) else "mask"
        return (f"build a new tensor instead of assigning into `{x}`: e.g. `{x} = {x}.masked_fill({mask}, {v})` or "
                f"`{x} = torch.where({mask}, {v}, {x})` (or clone it first: `{x} = {x}.clone()`).")
    return None


def py_expr(name: str) -> str:
    """A parameter name as Python: "model.0.weight" -> "model[0].weight"."""
    parts = name.split(".")
    out = parts[0]
    for p in parts[1:]:
        out += f"[{p}]" if p.isdigit() else f".{p}"
    return out


def _code(site: Site | None) -> str:
    """`` (`code`)`` for a summary sentence, without the line's trailing comment."""
    site = statement_site(site)
    if not site or not site.code:
        return ""
    code = site.code
    cut = code.find("  #")
    if cut > 0:
        code = code[:cut].rstrip()
    return f" (`{code}`)"


def _plain(site: Site | None) -> str:
    """The site's statement as written, without its trailing comment ("" when unknown)."""
    site = statement_site(site)
    return (site.code or "").split("  #")[0].strip() if site is not None else ""


def _at(site: Site | None) -> str:
    return f" at {statement_site(site).short}" if site else ""


def _code_of(e: Event) -> str:
    return (e.site.code or "") if e.site else ""


def _clear_call(e: Event) -> str:
    """How the user's line cleared .grad: `zero_grad()` or `.grad = None`."""
    code = e.site.code if e.site else ""
    if e.context == "optimizer" or "zero_grad" in (code or "") or e.kind == "inplace":
        return "zero_grad()"
    return "`.grad = None`"


class WordingMixin:
    """Text built from the trace (mixed into Diagnosis): fixes and summaries per cause."""

    def _hook_fix(self, h: Event, default: str) -> str:
        var = self._late_binding(h)
        if var is None:
            return default
        return (f"the hooks registered on this line all read `{var}` when they run, i.e. its last value (Python closures "
                f"bind late); bind the value when you create each hook: `lambda g, {var}={var}: ...` or "
                f"functools.partial.")

    def _computed_once_reused(self, e: Event) -> str:
        """For a value made (under no_grad / inference_mode) whose line never ran again although the function
        holding it (or one around it) was called again later: a cache filled once (e.g. by a validation call)
        and reused. Returns that function's name; else ""."""
        if e.site is None or not e.site.stack:
            return ""
        key = (e.site.filename, e.site.lineno)
        later = [x for x in self.ev[e.index + 1:] if x.site is not None and x.kind not in ("module", "backward", "grad_mode")]
        for fr in reversed(e.site.stack):  # the cut's own function first, then its callers
            if fr.function in ("<module>", "", None):
                break
            fn = (fr.filename, fr.function)
            left = False
            again = None
            for j, x in enumerate(later):
                if any((f.filename, f.function) == fn for f in x.site.stack):
                    if left:
                        again = j
                        break
                else:
                    left = True
            if again is not None:
                if any((x.site.filename, x.site.lineno) == key for x in later[again:]):
                    return ""  # called again, and computed it again
                name = fr.function
                return name.rsplit(".", 1)[0] if name.endswith(".forward") else name
        return ""

    def _grad_off_elsewhere(self, e: Event) -> str:
        """For a cut made with grad off: when grad was switched off by a call that is not a `with` line or
        decorator in the cut's own call chain (a context manager's __enter__, a helper, a global switch),
        the sentence naming it; else ""."""
        if e.site is None or e.cut != "no_grad":
            return ""
        for j in range(e.index - 1, -1, -1):
            g = self.ev[j]
            if g.kind != "grad_mode" or g.context != "user" or g.site is None:
                continue
            if g.detail.get("enabled") is not False:
                return ""
            if any(fr.filename == g.site.filename and fr.function == g.site.function for fr in e.site.stack):
                return ""  # a `with torch.no_grad():` / decorator the user can see around the line
            fn = g.site.function
            code = g.site.code.split('#')[0].strip()
            gen = code.startswith("with ")  # a `with` in a function not on the stack: a suspended generator
            return (f"grad was switched off by `{code or _short(g.op)}`"
                    f"{_at(g.site)}" + (f" (in {fn})" if fn and fn != "<module>" else "")
                    + (f", and {fn or 'that generator'} yields inside that block, so grad stays off in the caller "
                       f"until it resumes" if gen else ""))
        return ""

    def _nograd_lib(self, e):
        """The library function (qualified name) that ran the cut ``e`` under no_grad, or None."""
        if e.cut != "no_grad":
            return None
        g = self._governing_grad_mode(e)
        return (g.detail.get("lib_fn") if g is not None else None) or None

    def _one_backward_fix(self, *bws) -> str:
        """Sum the losses of several backward calls into one: named from the user's loss names when they have some."""
        names = list(dict.fromkeys(self._root_label(b) for b in bws))
        named = len(names) > 1 and not any(re.fullmatch(r"t\d+|the loss|.*\(\.\.\.\)", n) for n in names)
        how = f" (`({' + '.join(names)}).backward()`)" if named else " on their sum"
        return f"add the losses and call backward once{how}, or pass retain_graph=True to every backward but the last."
