"""Wording apart from deciding: the registry of wording functions (:data:`WORDING`, filled by the
``templates*`` modules) that turn a :class:`~.finding.Finding` into its summary, detail and fix, the text
primitives they are built from, and :func:`explain`, which makes the public Explanation from a Finding and its
wording. Nothing here sees the trace: only what a Finding holds."""
from __future__ import annotations

import inspect
import re

from ..core.explanation import Explanation
from ..core.model import Event, Site
from .common import CUT_CAUSE, _opname, _short, cleared_by_zero_grad, statement_site

#: wording key ("<rule>" or "<rule>.<form>") -> pure function (its Finding's facts as keywords) -> (summary,
#: detail, fix)
WORDING: dict = {}
_SIGNATURES: dict = {}


class Said(str):
    """A summary sentence that keeps its two parts: ``subject`` (what it is about: "w.grad is None", "backward on
    `loss` failed") and ``reason`` (what follows the colon), its text being "<subject>: <reason>"; a sentence
    made of a subject only has ``reason`` None. ``of``: the name a "<name>.grad is ..." subject begins with, so
    that the sentence can be said of several targets at once (:meth:`about`). Another finding's wording quotes
    :meth:`quote`; passes append with :meth:`plus`. Nothing takes the text apart."""

    def __new__(cls, subject: str, reason: str | None = None, of: str | None = None):
        s = super().__new__(cls, subject if reason is None else f"{subject}: {reason}")
        s.subject, s.reason, s.of = subject, reason, of
        return s

    def quote(self) -> str:
        """What another sentence quotes of this one: its reason (all of it for a sentence without one)."""
        return str(self) if self.reason is None else self.reason

    def plus(self, text: str) -> Said:
        """The sentence with ``text`` appended (to its reason, or its subject when it has no reason)."""
        if self.reason is None:
            return Said(self.subject + text, None, self.of)
        return Said(self.subject, self.reason + text, self.of)

    def about(self, shown: str) -> Said:
        """The same sentence said of several targets (``shown``: their names) in place of the one it names."""
        if self.of is None:
            return self
        return Said(f"{shown}: {self.subject[len(self.of):]}", self.reason)


def said(subject: str, reason: str | None = None, *, of: str | None = None) -> Said:
    """A summary sentence: "<subject>: <reason>" (see :class:`Said`); ``of``: the name the subject begins with."""
    return Said(subject, reason, of)


class WordingConflict(ValueError):
    """Two wording functions registered under one key."""


def words(key: str):
    """Decorator: register a wording function under ``key``, the name of the rule it words (``rule.form`` for
    one of several forms of one rule). A key registered twice is an error at import."""

    def register(fn):
        if key in WORDING:
            raise WordingConflict(f"two wording functions for {key!r}: {WORDING[key].__name__} and {fn.__name__}")
        params = inspect.signature(fn).parameters.values()
        WORDING[key] = fn
        _SIGNATURES[key] = tuple(p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD)
        return fn

    return register


def facts_for(key: str, *args, **kw) -> dict:
    """The facts of a Finding worded by ``key``: its wording function's arguments, by parameter name."""
    names = _SIGNATURES[key]
    if len(args) > len(names):
        raise TypeError(f"the wording {key!r} takes {len(names)} facts, not {len(args)}")
    out = dict(zip(names, args))
    out.update(kw)
    return out


def word(f) -> tuple:
    """(summary, detail, fix) of a Finding, by its wording function (its summary a :class:`Said`)."""
    summary, detail, fix = WORDING[f.wording](**f.facts)
    return (summary if isinstance(summary, Said) else Said(summary)), detail, fix


def other_cuts_text(extra) -> str:
    """The sentence naming the further cuts on other paths (``extra``: [(event, site)])."""
    named = "; ".join(f"{_as_written(e)}{_at(site)}{_code(site)} ({CUT_CAUSE.get(e.cut, e.cut)})"
                      for e, site in extra[:4])
    return (f" It is also cut on {'another path' if len(extra) == 1 else f'{len(extra)} other paths'}: "
            f"{named}" + ("; …" if len(extra) > 4 else "") + ".")


OTHER_CUTS_FIX = " Fix each of the other cuts as well, or the gradient stays cut on those paths."


def tied_text(also) -> str:
    """The note for a Parameter that has other names (tied weights)."""
    return f" ({', '.join(f'`{a}`' for a in also[:3])} is the same Parameter: the weights are tied.)"


def composed(f) -> tuple:
    """(summary, detail, fix) of a Finding with what the passes added (other cuts, tied names)."""
    summary, detail, fix = word(f)
    if f.other_cuts:
        summary, fix = summary.plus(other_cuts_text(f.other_cuts)), fix + OTHER_CUTS_FIX
    if f.tied:
        summary = summary.plus(tied_text(f.tied))
    return summary, detail, fix


def explain(f) -> Explanation:
    """The public Explanation of a Finding."""
    summary, detail, fix = composed(f)
    if f.group:  # (one explanation for several targets: the target list in place of the name)
        shown = ", ".join(f.group[:4]) + (f" and {len(f.group) - 4} more" if len(f.group) > 4 else "")
        return Explanation(str(f.cause), f.site, shown, str(summary.about(shown)), detail, fix, f.path,
                           f.evidence, f.status)
    return Explanation(str(f.cause), f.site, f.target, str(summary), detail, fix, f.path, f.evidence, f.status,
                       f.extra_sites, f.rule)


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


# in-place methods that have no out-of-place method of the same name: what builds the new tensor instead
_NO_OUT_OF_PLACE = {"zero": "torch.zeros_like({x})", "fill": "torch.full_like({x}, {args})",
                    "copy": "{args}.clone()", "normal": "torch.empty_like({x}).normal_({args})",
                    "uniform": "torch.empty_like({x}).uniform_({args})",
                    "random": "torch.empty_like({x}).random_({args})",
                    "bernoulli": "torch.empty_like({x}).bernoulli_({args})",
                    "exponential": "torch.empty_like({x}).exponential_({args})",
                    "geometric": "torch.empty_like({x}).geometric_({args})",
                    "cauchy": "torch.empty_like({x}).cauchy_({args})",
                    "log_normal": "torch.empty_like({x}).log_normal_({args})"}


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
        x, op, args = m.groups()
        new = _NO_OUT_OF_PLACE.get(op)  # (zero_, fill_, copy_, normal_, ...: no method without the underscore)
        new = new.format(x=x, args=args) if new is not None else f"{x}.{op}({args})"
        return f"write it out-of-place: `{x} = {new}` (a new tensor; the saved one stays intact)."
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


_TARGET = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[-?\d+\])*")
_INTERNAL = re.compile(r"t\d+")  # (a tensor the trace has no name for: its trace-local id, "t16")


def trace_id(name: str) -> bool:
    """Whether ``name`` is only the trace's id for a tensor (``t16``), not a name of the user's."""
    return bool(_INTERNAL.fullmatch(name))


def assign_target(name: str, placeholder: str = "<state>") -> str:
    """``name`` where a fix assigns to it (`h = h.detach()`): a variable, attribute or indexed item as the user
    wrote it; ``placeholder`` for an expression (`torch.tanh(lin(x))`) or a name only the trace has (`t16`)."""
    return name if _TARGET.fullmatch(name) and not trace_id(name) else placeholder


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
    return "zero_grad()" if cleared_by_zero_grad(e) else "`.grad = None`"




def hook_fix(var: str | None, default: str) -> str:
    """The fix for a hook: ``default``, or, when hooks made on one line share a loop variable ``var`` (late
    binding), how to bind it."""
    if var is None:
        return default
    return (f"the hooks registered on this line all read `{var}` when they run, i.e. its last value (Python closures "
            f"bind late); bind the value when you create each hook: `lambda g, {var}={var}: ...` or "
            f"functools.partial.")


def grad_off_text(g: Event | None) -> str:
    """The sentence naming the call that switched grad off (``g``: its grad_mode event) when it is not a `with`
    line or decorator around the cut; "" when there is none."""
    if g is None:
        return ""
    fn = g.site.function
    code = g.site.code.split('#')[0].strip()
    gen = code.startswith("with ")  # a `with` in a function not on the stack: a suspended generator
    return (f"grad was switched off by `{code or _short(g.op)}`"
            f"{_at(g.site)}" + (f" (in {fn})" if fn and fn != "<module>" else "")
            + (f", and {fn or 'that generator'} yields inside that block, so grad stays off in the caller "
               f"until it resumes" if gen else ""))


def one_backward_fix(names) -> str:
    """Sum the losses of several backward calls into one: named from the user's loss names (``names``: the roots'
    labels) when they have some."""
    names = list(dict.fromkeys(names))
    named = len(names) > 1 and not any(re.fullmatch(r"t\d+|the loss|.*\(\.\.\.\)", n) for n in names)
    how = f" (`({' + '.join(names)}).backward()`)" if named else " on their sum"
    return f"add the losses and call backward once{how}, or pass retain_graph=True to every backward but the last."


def froze_everything_text(whole):
    """(sentence, fix or None) for a line that froze every parameter in the step (``whole``: what
    Facts.froze_everything found), or None."""
    if not whole:
        return None
    n, owner, loop = whole
    why = f"That line froze every parameter in the step ({n})" + (
        ": a loop over named_modules() meets the whole model first (its name is \"\"), and requires_grad_ "
        "on it freezes everything." if loop else ".")
    if not loop:
        return why, None
    owner = owner or "the model"
    return why, (f"freeze by parameter name instead (`for n, p in {owner}.named_parameters(): "
                 f"p.requires_grad_(<condition on n>)`), or skip the root module (name == \"\").")
