"""Wording apart from deciding: the text helpers and templates that turn a rule's finding (cause, site,
evidence) into a summary and a fix, filled from the user's own code and names (no scenario's names)."""
from __future__ import annotations

import re

from ..explanation import Explanation
from ..model import Event, Frame, Site
from .common import _opname, _receiver, _short, statement_site


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

    def _timing_explanation(self, tid, name, e, read):
        """`.grad` cleared after backward (``e``) and read cleared afterwards (``read``)."""
        via = _clear_call(e)
        zeroed = e.kind == "inplace"
        found = "zeros" if zeroed else "None"
        if read.kind == "optimizer_step":
            reader = (f"{_receiver(_code_of(read), '.step(') or read.op.split('.')[0]}.step(){_at(read.site)} read it "
                      f"and found {found}"
                      + ("" if zeroed else ", so it skipped the parameter"))
        elif read.context == "clip":
            reader = f"clipping{_at(read.site)}{_code(read.site)} read it and found {found}"
        else:
            reader = f"{_code(read.site).strip() or 'a read'}{_at(read.site)} read it and found {found}"
        what = "wrote zeros into it" if zeroed else "set it back to None"
        owners = {s.site.stack if s.site else s.index for s in self.ev
                  if s.kind == "optimizer_step" and tid in (s.detail.get("params") or ())}
        if via == "zero_grad()" and len(owners) > 1 and not zeroed:  # two optimizers hold it: one's zero_grad
            # clears the other's
            return Explanation(
                "set_to_none_timing", e.site, name,
                f"{name}.grad is None: backward filled it, then {via}{_at(e.site)}{_code(e.site)} set it back "
                f"to None, and {reader}: {name} is in the param_groups of {len(owners)} optimizers, so "
                f"this zero_grad() clears it too.",
                detail="Each optimizer's zero_grad() clears every parameter it holds; an optimizer built from "
                       "model.parameters() holds the other model's parameters as well.",
                fix="give each optimizer only the parameters of the model it trains (build it from that "
                    "model's .parameters(), not from a container that holds both).",
                evidence=[e, read])
        return Explanation(
            "set_to_none_timing", e.site, name,
            f"{name}.grad is {'all zeros' if zeroed else 'None'}: backward filled it, then {via}{_at(e.site)}"
            f"{_code(e.site)} {what} before its consumer: {reader}.",
            detail=("zero_grad() (set_to_none=False) writes zeros into the existing .grad tensors" if zeroed else
                    "zero_grad() sets gradients to None by default (set_to_none=True)")
                   + "; anything that reads them after it and before the next backward (clipping, logging, "
                     "optimizer.step()) sees no gradient.",
            fix=f"move {via} after the last read of the gradients (after optimizer.step()) or to the start of the "
                f"step, before backward.",
            evidence=[e, read])

    @staticmethod
    def _zero_reason(op):
        if "relu" in op:
            return ("Every input to this ReLU was negative, so it passes back no gradient (a dead ReLU): "
                    "often from a large negative bias or a too-high learning rate.")
        if "clamp" in op or "clip" in op or "hardtanh" in op:
            return "Every value was outside the clamp range, so the clamp passes back no gradient (saturated)."
        if "mask" in op or "mul" in op or "where" in op:
            return "The gradient was multiplied by zero (a mask or gate that is all zero)."
        if "embedding" in op:
            return ("The rows looked up got no gradient: the embedding's padding_idx row never gets one, so when "
                    "every index is the padding index, the whole gradient is zero.")
        return "This operation's gradient was exactly zero for this input."

    @staticmethod
    def _zero_fix(op, site=None):
        code = f" `{_plain(site)}`" if _plain(site) else ""
        if "relu" in op:
            return f"check the initialisation of the layer before{code} (its bias), or use LeakyReLU/GELU."
        if "clamp" in op or "clip" in op or "hardtanh" in op:
            return f"check the scale of the values entering{code}: every one was outside the clamp range."
        if "embedding" in op:
            return f"check the indices passed to{code}: every one is the padding index."
        return f"check the values entering{code or ' this operation'}."

    def _hook_replaced(self, h, name, arrived):
        """A non-zero gradient arrived (norm ``arrived``; -1: sent, not measured) and the hook ``h`` zeroed it."""
        site = self._hook_site(h)
        post = bool(h.detail.get("post_accumulate"))
        return Explanation(
            "hook_modified", site, name,
            f"{name}.grad is all zeros: backward delivered a non-zero gradient"
            f"{f' (norm {arrived:.3g})' if arrived > 0 else ''}, but the "
            f"{'post-accumulate-grad ' if post else ''}hook {h.detail.get('hook', '')} registered"
            f"{' before the trace' if h.detail.get('before_trace') else _at(h.site)} "
            f"{'zeroed .grad' if post else 'replaced it'}{_at(site)}{_code(site)}.",
            detail=("A post-accumulate-grad hook runs after the gradient is stored in .grad and can change it in "
                    "place (pruning masks, optimizer-in-backward)." if post else
                    "Tensor hooks run before the gradient is accumulated into .grad; what the hook returns "
                    "replaces the gradient."),
            fix=self._hook_fix(h, f"check what the hook multiplies or overwrites .grad with in `{_plain(site)}` "
                                  f"(it is all zero here)." if post else
                               f"check the hook's arithmetic in `{_plain(site)}` (it returns zero here); return None "
                               f"from the hook to leave the gradient unchanged."),
            evidence=[h])

    def _lib_nograd_text(self, e, what, site):
        if e.cut != "no_grad":
            return None
        g = self._governing_grad_mode(e)
        lib = g.detail.get("lib_fn") if g is not None else None
        if not lib:
            return None
        fix = "use an operation that keeps the graph."
        if lib.endswith(".sample") or lib.endswith("sample_n"):
            fix = ("use `.rsample()` (the reparameterised sample) so gradients reach the distribution's parameters, "
                   "or a score-function (REINFORCE) estimator that weights the sample's log_prob by its reward.")
        return (f"{what} went through {lib}(){_at(site)}{_code(site)}, which runs without gradient",
                f"{lib}() computes its result under torch.no_grad(), so nothing flows back through it.", fix)

    def _one_backward_fix(self, *bws) -> str:
        """Sum the losses of several backward calls into one: named from the user's loss names when they have some."""
        names = list(dict.fromkeys(self._root_label(b) for b in bws))
        named = len(names) > 1 and not any(re.fullmatch(r"t\d+|the loss|.*\(\.\.\.\)", n) for n in names)
        how = f" (`({' + '.join(names)}).backward()`)" if named else " on their sum"
        return f"add the losses and call backward once{how}, or pass retain_graph=True to every backward but the last."

    def _skipped_child(self, name, cpath, info) -> Explanation:
        """A child module the forward never called: the early return (or partial loop) that skipped it."""
        f = Frame.from_json(info["return_line"])
        parent = [e for e in self.ev if e.kind == "module" and (e.op == info["parent"] or not info["parent"])]
        outer = parent[-1].site.stack if parent and parent[-1].site else ()
        site = self._frame_site(f, outer)
        if info.get("loop"):
            return Explanation(
                "unused_parameter", site, name,
                f"{name}.grad is None: `{cpath}` was never called: the loop{_at(site)}{_code(site)} goes "
                f"over only part of `{info['loop']}` ({info.get('ran')} of its {info.get('of')} modules ran).",
                detail="A module that is skipped in the forward gets no gradient for its parameters "
                       "(and DDP reports them as unused).",
                fix=f"loop over all of `{info['loop']}` (check the slice, or a zip with a shorter list).",
                evidence=parent[-1:])
        return Explanation(
            "unused_parameter", site, name,
            f"{name}.grad is None: `{cpath}` was never called: "
            + ("the forward" if f.function.endswith("forward") else f"`{f.function.rsplit('.', 1)[-1]}`")
            + f" returned early{_at(site)}{_code(site)} before reaching it.",
            detail="A module that is skipped in the forward gets no gradient for its parameters "
                   "(and DDP reports them as unused).",
            fix=f"check the condition under which `{_plain(site)}` runs: it returns before `{cpath}` is called.",
            evidence=parent[-1:])

    def _zero_op_text(self, e, b, op, is_nd):
        """(why, fix) for an op whose backward zeroed the gradient."""
        if is_nd and op.startswith("normal"):
            why = "torch.normal(mean, std) draws a sample; PyTorch defines its gradient as zero"
            fix = ("reparameterise: `mean + std * torch.randn_like(std)` (or "
                   "torch.distributions.Normal(mean, std).rsample()), so gradients reach mean and std.")
        elif is_nd and op.startswith(("bernoulli", "poisson", "binomial", "multinomial")):
            why = f"{op}() draws a random sample; PyTorch defines its gradient as zero"
            fix = ("use a relaxed sample (torch.distributions.RelaxedBernoulli(...).rsample(), gumbel-sigmoid) "
                   "or a straight-through estimator `p + (torch.bernoulli(p) - p).detach()`.")
        elif is_nd:
            why = f"{op}() has a zero derivative almost everywhere"
            f = op if op in ("round", "sign", "floor", "ceil", "trunc", "heaviside") else "round"
            what_kept = {"sign": "sign", "heaviside": "step"}.get(f, f"{f}ed value").replace("trunced", "truncated")
            fix = (f"use a straight-through estimator: `x + (torch.{f}(x) - x).detach()` keeps the {what_kept} "
                   f"in the forward and passes the gradient through unchanged.")
        else:
            why = self._zero_reason(op)
            fix = self._zero_fix(op, e.site)
            if self._single_class(e):
                why = (f"{op}() over a class dimension of size 1: the softmax of a single logit is always 1, so "
                       f"the loss is constant and its gradient is exactly zero.")
                fix = ("for one output unit use BCEWithLogitsLoss (binary), or give the model one output per "
                       "class for cross_entropy (with integer class labels).")
            elif ("relu" in op or "clamp" in op) and self._feeds_loss_directly(e, b):
                # a hinge (triplet / margin / hinge loss): every term is already satisfied
                why = (f"{op}() here is a hinge inside the loss (max(0, ...)): every term was <= 0, so the "
                       f"loss is exactly 0 and sends no gradient back (all examples already satisfy it).")
                fix = (f"check the margin in `{_plain(e.site)}` (it must be positive for the hinge to "
                       f"give gradient) or use harder examples (hard-negative mining).")
        return why, fix
