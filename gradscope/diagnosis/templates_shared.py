"""Templates of the findings several rules share (data-path cuts, clears, hooks, replaced parameters, a parameter
the step does not train): the summary, detail and fix of each, filled from the user's own code and names.
Registered by importing this module (``templates`` does); no template names a model, a library or a value from a
particular scenario."""
from __future__ import annotations

from collections import namedtuple

from .common import _opname, _receiver
from .wording import (
    _at, _clear_call, _code, _code_of, _plain, py_expr, said, word, words,
)


def _ok_norm(norm) -> str:
    """`` (norm 0.123)`` for a gradient that arrived ("" when its norm is not known)."""
    return f" (norm {norm:.3g})" if isinstance(norm, (int, float)) and norm is not None else ""


def _ok_via(root) -> str:
    return f" from backward on `{root}`" if root else ""


#: (summary, detail, fix) of another finding, by name (what a template that quotes it reads)
_Worded = namedtuple("_Worded", "summary detail fix")


# === the texts of the helpers the rules share (data-path cuts, clears, hooks, replaced parameters) ===

# --- frozen_param -------------------------------------------------------------------------------
@words("unfreeze_kept_away")
def unfreeze_kept_away_text(name, on, site, guard, reached):
    """unfreeze_kept_away (frozen_param): the unfreeze ``on`` ran for ``reached`` other parameters, but the condition
    ``guard`` (at ``site``) kept it from reaching ``name``. Summary, detail, fix."""
    head = (f"the unfreeze{_at(on.site)}{_code(on.site)} ran for {reached} other parameter(s), but the "
            f"condition{_at(site)}{_code(site)} kept it from reaching {name}, which stays frozen")
    summary = said(f"{name}.grad is None", f"{head}, so autograd treats it as a constant.", of=name)
    detail = ("A parameter with requires_grad=False gets no gradient; an unfreeze only changes the parameters it "
              "is applied to.")
    fix = (f"unfreeze without that condition for the parameters that should train (the condition `"
           f"{guard.rstrip(':')}` is false for {name}), e.g. set requires_grad on every parameter you mean "
           f"to train.")
    return summary, detail, fix


def unfreeze_unreached_note(name, on, reached):
    """unfreeze_kept_away with no guard in sight: the note added to the freeze's explanation."""
    return (f" (An unfreeze ran{_at(on.site)}{_code(on.site)} for {reached} other "
            f"parameter(s), but it did not reach {name}.)")


# --- hook_modified ------------------------------------------------------------------------------
@words("post_accumulate_hook_cleared")
def post_accumulate_hook_cleared_text(name, steps, site, arrived, h):
    """post_accumulate_hook_cleared (hook_modified): summary, detail, fix."""
    where = " before the trace" if h.detail.before_trace else _at(h.site)
    summary = said(f"{name}.grad is None", f"backward delivered a gradient"
                   f"{f' (norm {arrived:.3g})' if arrived > 0 else ''}, but the post-accumulate-grad hook"
                   f"{' `' + h.detail.hook.rsplit('.', 1)[-1] + '`' if h.detail.hook else ''} registered{where} cleared .grad{_at(site)}{_code(site)}"
                   + (" after stepping the optimizer inside backward" if steps else "") + ".", of=name)
    detail = ("A post-accumulate-grad hook runs right after the gradient is stored in .grad; a hook that "
              "steps the optimizer and sets .grad to None (optimizer-in-backward) leaves no .grad to read "
              "after backward.")
    fix = (f"read or clip {name}'s gradient inside that hook (before it clears .grad), or remove the hook "
           f"when you step the optimizer after backward yourself.")
    return summary, detail, fix


# --- inplace_saved_tensor -----------------------------------------------------------------------
@words("corrupting_write")
def corrupting_write_text(name, status, orig, w, saver):
    how = ".data"
    got = {"zero": "all zeros", "nonfinite": "inf/nan", "received": "computed from overwritten values"}.get(
        status, "wrong")
    """corrupting_write (inplace_saved_tensor): summary, detail, fix."""
    summary = said(f"{name}.grad is {got}",
                   f"{_opname(w)}(){_at(w.site)}{_code(w.site)} wrote into `{orig}` through {how} "
                   f"after {_opname(saver)}(){_at(saver.site)} saved it for backward, so backward used the overwritten "
                   f"values; PyTorch does not notice writes through {how}.", of=name)
    detail = ("Autograd saves some inputs and results of an operation to compute its gradient. A write "
              "through .data changes them without bumping the version autograd checks, so the gradient is "
              "silently wrong instead of an error.")
    fix = (f"do not write into `{orig}` through {how} while the graph that saved it is still "
           f"to be used: compute a new tensor instead (out of place), or make the change after backward.")
    return summary, detail, fix


# --- custom_function: tensors apply() could not see ---------------------------------------------------
@words("data_cut.custom_nested_args")
def data_cut_custom_nested_args_text(name, cls, site):
    """data_cut (custom_function): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"{cls}{_at(site)}{_code(site)} made no graph: the tensor that needs "
                   f"grad reached its forward inside a tuple, list or dict argument, where autograd does not look.",
                   of=name)
    detail = ("Function.apply connects only the tensors passed to it directly as arguments; a tensor inside a "
              "container is an ordinary Python object to it, so the output gets no grad_fn and backward() never "
              "reaches what went in.")
    fix = (f"pass each tensor as its own argument, `{cls}.apply(<a>, <b>)`, with forward taking them one by one, "
           "and return one gradient per argument from backward.")
    return summary, detail, fix


# --- nondifferentiable_op -----------------------------------------------------------------------
@words("data_cut.custom_forward")
def data_cut_custom_forward_text(name, cls, nx):
    """data_cut (nondifferentiable_op): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"the result of {cls}{_at(nx.site)}{_code(nx.site)} does not require grad "
                   f"although its input did: its forward ran without autograd recording it.", of=name)
    detail = ("A custom Function's output gets a grad_fn only through Function.apply, and only if it is not "
              "marked non-differentiable.")
    fix = ("call the Function through .apply(...) (not .forward(...)), and do not mark outputs that should "
           "carry gradient with ctx.mark_non_differentiable().")
    return summary, detail, fix


@words("data_cut.custom_marked")
def data_cut_custom_marked_text(name, cls, site):
    """data_cut (nondifferentiable_op): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"the custom autograd.Function {cls} marks its output non-differentiable"
                   f"{_at(site)}{_code(site)}, so autograd treats that output as a constant and never calls its "
                   f"backward.", of=name)
    detail = ("ctx.mark_non_differentiable() is for outputs that cannot have a gradient (integer indices, "
              "masks); a marked output gets no grad_fn.")
    fix = ("remove ctx.mark_non_differentiable(...) for outputs that should carry gradient; the "
           "Function's backward() is then used (a straight-through estimator needs no mark).")
    return summary, detail, fix


# --- not_trained --------------------------------------------------------------------------------
@words("not_trained")
def not_trained_text(name, status, trainable, use, first, inner):
    """not_trained (not_trained): a parameter the step does not train; ``trainable``: the trace saw an optimizer
    hold something; ``use``: "no_grad" (used only with grad disabled, ``first``: the first such line), "unused"
    or "grad" (its own finding ``inner`` says how). Summary, detail, fix."""
    now = "None" if status == "none" else ("all zeros" if status == "zero" else "not finite")
    held = "no optimizer in the trace holds it" if trainable else "the trace saw no optimizer step"
    inner = _Worded(*word(inner))
    if use == "no_grad":
        how = f"it was only used with gradients disabled (first{_at(first)}{_code(first)})"
    elif use == "unused":
        how = "the step never used it"
    else:
        how = inner.summary.quote().rstrip(".")
    summary = said(f"{name}.grad is {now}, but this step does not train {name}",
                   f"{held} and {how}. That is how a target "
                   f"network, an EMA teacher or a model being evaluated is used.", of=name)
    detail = (inner.summary)
    fix = (f"nothing to fix unless {name} should train; then "
           + ("hand it to an optimizer (its param_groups), and " if trainable else "") + inner.fix)
    return summary, detail, fix


# --- ok -----------------------------------------------------------------------------------------
@words("cleared_after_use")
def cleared_after_use_text(name, status, root, norm, readers, clear, fill):
    """cleared_after_use (ok): backward from ``root`` filled it (``fill``), ``readers`` read it, then ``clear``
    cleared it. Summary, detail, fix."""
    n = _ok_norm(norm)
    seen = []
    for r in readers:
        what = (f"{_receiver(_code_of(r), '.step(') or r.op.split('.')[0]}.step(){_at(r.site)}"
                if r.kind == "optimizer_step" else f"clipping{_at(r.site)}")
        if what not in seen:
            seen.append(what)
    by = f", {' and '.join(seen[:2])} read it" if seen else ""
    how = "set it back to None" if clear.kind == "grad_set" else "zeroed it"
    now = "None" if status == "none" else "all zeros"
    summary = said(f"{name}.grad is {now} now, as it should be",
                   f"backward from `{root}`{_at(fill.site)} filled it{n}{by}, "
                   f"then {_clear_call(clear)}{_at(clear.site)} {how} for the next step. Gradient flows.", of=name)
    detail = ("Clearing gradients after their consumers (optimizer.step(), clipping, logging) have read them is "
              "correct; only a read that finds them cleared is a bug.")
    fix = ("nothing to fix.")
    return summary, detail, fix


# --- param_recreated ----------------------------------------------------------------------------
@words("param_replaced")
def param_replaced_text(name, attr, e, rewrapped, lhs):
    """param_replaced (param_recreated): the module_set ``e`` replaced (or tied) ``attr``; ``rewrapped``: by a new
    nn.Parameter around the old values, assigned to ``lhs``. Summary, detail, fix."""
    if e.detail.tied:
        fix = "tie the weights before creating the optimizer (or create it again after tying)."
    elif rewrapped:
        fix = (f"change the values in place so the optimizer keeps its Parameter: "
               f"`with torch.no_grad(): {lhs}.clamp_(...)` (or .copy_(new_values)), not a new "
               f"nn.Parameter.")
    else:
        fix = ("create the optimizer after replacing layers (or add the new parameters with "
               "optimizer.add_param_group), and drop the old module's parameters.")
    summary = said(f"{name}.grad is None", f"{attr} was "
                   + (f"tied to `{e.detail.tied_to}`" if e.detail.tied_to else
                  f"replaced by a new {e.detail.new_class}")
               + f"{_at(e.site)}{_code(e.site)}; the forward uses the new one, while this parameter belongs to the "
               f"old instance (which the optimizer may still hold).", of=name)
    detail = ("Parameters are objects: an optimizer built before the replacement keeps updating the old "
              "module's parameters, which no longer take part in the forward.")
    return summary, detail, fix


@words("stale_optimizer")
def stale_optimizer_text(name, made, info, opt, mods):
    shown = ", ".join(f"`{m}`" for m in mods[:3]) + (", …" if len(mods) > 3 else "")
    """stale_optimizer (param_recreated): summary, detail, fix."""
    summary = said(f"{name}.grad is None",
                   f"the optimizer holds this parameter ({'x'.join(map(str, info.shape)) or 'scalar'}), "
                   f"which no module of the model uses any more, while the forward trains {shown}, which no optimizer holds"
                   + (f" (created{_at(made)}{_code(made)})" if made else "")
                   + ": the optimizer was built before those layers were replaced or added.", of=name)
    detail = ("An optimizer keeps the Parameter objects it was given; layers replaced or added afterwards are "
              "not in it, and the replaced ones no longer take part in the forward.")
    fix = (f"build the optimizer after the model is complete, or add the new parameters: "
           f"`{opt}.add_param_group({{'params': {py_expr(mods[0])}.parameters()}})`.")
    return summary, detail, fix


@words("data_cut.copied_into_new_param")
def data_cut_copied_into_new_param_text(name, new, site, x):
    """data_cut (param_recreated): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"its values were copied{_at(x.site)}{_code(x.site)} into a new parameter "
                   f"({new}) created{_at(site)}{_code(site)}; the forward uses the new one, while the optimizer holds "
                   f"this one.", of=name)
    detail = ("Rebuilding a model and loading a state_dict into it creates new Parameter objects; an "
              "optimizer built earlier keeps the old ones, which no longer take part in the forward.")
    fix = ("build the optimizer after the model is rebuilt and loaded, or load the state into the existing "
           "model (model.load_state_dict(...)) instead of a new instance.")
    return summary, detail, fix


# --- zero_gradient ------------------------------------------------------------------------------
@words("zeroed_after_backward")
def zeroed_after_backward_text(name, op, e):
    """zeroed_after_backward (zero_gradient): summary, detail, fix."""
    summary = said(f"{name}.grad is all zeros",
                   f"backward filled it, then {op}{_at(e.site)}{_code(e.site)} scaled it to "
                   f"zero.", of=name)
    detail = ("The gradient was multiplied by zero after backward.")
    fix = (f"check the factor in `{_plain(e.site)}`: it scales the gradient to zero"
           + (" (max_norm must be > 0)" if "clip" in op else "") + ".")
    return summary, detail, fix


@words("retained_zeroed")
def retained_zeroed_text(name, op, zn, e):
    """retained_zeroed (zero_gradient): summary, detail, fix."""
    summary = said(f"{name}.grad is all zeros", f"gradient reaches {op}{_at(e.site)}{_code(e.site)} but comes out as "
                   f"zero ({zn.name}), so nothing flows back to {name}.", of=name)
    detail = (_zero_reason(op))
    fix = (_zero_fix(op, e.site))
    return summary, detail, fix


# --- unused_parameter: a child module skipped by an early return or a partial loop -----------------
@words("skipped_child")
def skipped_child_text(name, cpath, info, f, site):
    """skipped_child (unused_parameter): `cpath` never ran; ``f``: the return (or loop) line at ``site``."""
    detail = ("A module that is skipped in the forward gets no gradient for its parameters "
              "(and DDP reports them as unused).")
    if info.get("loop"):
        return (said(f"{name}.grad is None", f"`{cpath}` was never called: the loop{_at(site)}{_code(site)} goes "
                     f"over only part of `{info['loop']}` ({info.get('ran')} of its {info.get('of')} modules ran).",
                     of=name),
                detail,
                f"loop over all of `{info['loop']}` (check the slice, or a zip with a shorter list).")
    return (said(f"{name}.grad is None", f"`{cpath}` was never called: "
                 + ("the forward" if f.function.endswith("forward") else f"`{f.function.rsplit('.', 1)[-1]}`")
                 + f" returned early{_at(site)}{_code(site)} before reaching it.", of=name),
            detail,
            f"check the condition under which `{_plain(site)}` runs: it returns before `{cpath}` is called.")


# --- zero_gradient: the op whose backward zeroed it -------------------------------------------------
def zero_op_text(e, op, is_nd, single, hinge):
    """(why, fix) for the op ``e`` (``op``) whose backward zeroed the gradient; ``is_nd``: its derivative is zero
    almost everywhere (a sample, round/sign); ``single``: a softmax over a class dimension of size 1; ``hinge``:
    a relu/clamp that is a hinge inside the loss."""
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
    elif single:
        why = (f"{op}() over a class dimension of size 1: the softmax of a single logit is always 1, so "
               f"the loss is constant and its gradient is exactly zero.")
        fix = ("for one output unit use BCEWithLogitsLoss (binary), or give the model one output per "
               "class for cross_entropy (with integer class labels).")
    elif hinge:
        why = (f"{op}() here is a hinge inside the loss (max(0, ...)): every term was <= 0, so the "
               f"loss is exactly 0 and sends no gradient back (all examples already satisfy it).")
        fix = (f"check the margin in `{_plain(e.site)}` (it must be positive for the hinge to "
               f"give gradient) or use harder examples (hard-negative mining).")
    else:
        why = _zero_reason(op)
        fix = _zero_fix(op, e.site)
    return why, fix


def _zero_reason(op):
    """The detail for an op whose backward zeroed the gradient (when no more specific one applies)."""
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


def _zero_fix(op, site=None):
    """The fix for an op whose backward zeroed the gradient (when no more specific one applies)."""
    code = f" `{_plain(site)}`" if _plain(site) else ""
    if "relu" in op:
        return f"check the initialisation of the layer before{code} (its bias), or use LeakyReLU/GELU."
    if "clamp" in op or "clip" in op or "hardtanh" in op:
        return f"check the scale of the values entering{code}: every one was outside the clamp range."
    if "embedding" in op:
        return f"check the indices passed to{code}: every one is the padding index."
    return f"check the values entering{code or ' this operation'}."


# --- nonfinite_gradient: why an op's backward is not finite, and the guard for it ---------------------------
_DOMAIN_LOG = ("the derivative of log is 1/x: infinite where its input is 0 (a probability that is exactly 0)",
               "clamp its input (`torch.log(p.clamp_min(1e-12))`) or stay in log space (`log_softmax`, `logsigmoid`).")
_DOMAIN_ARC = ("the derivative of acos/asin is 1/sqrt(1 - x^2): infinite where its input is exactly 1 or -1 (a "
               "cosine similarity of two equal vectors)",
               "clamp its input into the open interval: `torch.acos(c.clamp(-1 + 1e-7, 1 - 1e-7))`.")
_DOMAIN_NORM = ("the derivative of a norm or distance is x/||x||: 0/0 where the vector, or the distance, is exactly 0 "
                "(an item compared with itself)",
                "add an epsilon under the root (`torch.sqrt((d ** 2).sum(-1) + 1e-12)`), or leave out the pairs whose "
                "distance is zero by construction.")
_MASKED_ROW = ("a softmax over a row masked entirely with -inf is 0/0: no entry of the row is finite",
               "mask with a large finite negative value (`torch.finfo(x.dtype).min`) instead of -inf, or drop the "
               "rows that are masked entirely (e.g. padding-only sequences).")
#: forward op -> (why its backward is not finite at the edge of its domain, the guard)
_NONFINITE_OPS = {
    "sqrt": ("the derivative of sqrt is 1/(2*sqrt(x)): infinite where its input is 0",
             "add an epsilon inside the root (`torch.sqrt(x + 1e-12)`) or clamp it (`x.clamp_min(1e-12).sqrt()`)."),
    "rsqrt": ("the derivative of rsqrt is infinite where its input is 0",
              "add an epsilon: `torch.rsqrt(x + 1e-12)`."),
    "log": _DOMAIN_LOG, "log2": _DOMAIN_LOG, "log10": _DOMAIN_LOG,
    "log1p": ("the derivative of log1p is 1/(1 + x): infinite where its input is -1",
              "clamp its input: `torch.log1p(x.clamp_min(-1 + 1e-7))`."),
    "acos": _DOMAIN_ARC, "asin": _DOMAIN_ARC, "arccos": _DOMAIN_ARC, "arcsin": _DOMAIN_ARC,
    "atanh": ("the derivative of atanh is 1/(1 - x^2): infinite where its input is 1 or -1",
              "clamp its input: `torch.atanh(x.clamp(-1 + 1e-7, 1 - 1e-7))`."),
    "pow": ("a power with an exponent below 1 has an infinite derivative where its base is 0",
            "keep the base away from 0 (`(x + 1e-12) ** p`) or use a form that is smooth at 0."),
    "div": ("a division by a value that is 0 (or 0/0) has no finite gradient",
            "add an epsilon to the denominator (`a / (b + 1e-12)`) or mask out the entries where it is 0."),
    "norm": _DOMAIN_NORM, "linalg_vector_norm": _DOMAIN_NORM, "linalg_norm": _DOMAIN_NORM, "cdist": _DOMAIN_NORM,
    "pairwise_distance": _DOMAIN_NORM, "dist": _DOMAIN_NORM,
    "softmax": _MASKED_ROW, "log_softmax": _MASKED_ROW, "cross_entropy": _MASKED_ROW, "nll_loss": _MASKED_ROW,
    "scaled_dot_product_attention": _MASKED_ROW,
    "exp": ("exp overflows to inf for large inputs", "clamp its input, or use a stable form (`logsumexp`, `softplus`)."),
}
_NONFINITE_ANY = ("backward through this operation produced inf or nan from finite inputs (e.g. sqrt or log at 0, "
                  "division by zero, overflow)",
                  "guard the operation (add an epsilon, clamp its input) or use a numerically stable form.")


#: forward op -> (how a non-finite value arises in its result, the fix) for where it entered the forward
_ENTERED = {
    "div": ("a division by 0 (0/0 is nan, x/0 is inf)",
            "add an epsilon to the denominator (`a / (b + 1e-12)`) or mask out the entries where it is 0."),
    "exp": ("exp overflows to inf for large inputs",
            "use a stable form (`torch.softmax`, `torch.logsumexp`, `log_softmax`) or subtract the maximum first."),
    "sum": ("a sum that overflows the dtype is inf",
            "use a stable form (`torch.softmax`, `torch.logsumexp`) or a wider dtype."),
    "log": _DOMAIN_LOG, "sqrt": _NONFINITE_OPS["sqrt"], "pow": _NONFINITE_OPS["pow"], "acos": _DOMAIN_ARC,
    "asin": _DOMAIN_ARC,
}
_FILLED = ("that call filled in inf or nan (padding, a mask); even where it is sliced away or multiplied by 0 later, "
           "0 * nan is nan in the backward of the layer it went through",
           "fill with a finite value (0 for padding, `torch.finfo(x.dtype).min` for a mask) and mask the padded "
           "entries out of the loss.")


def nonfinite_entered(op: str, filled: bool) -> tuple:
    """(how, fix) for the call where a non-finite value first appeared in the forward."""
    if filled:
        return _FILLED
    key = op.strip("_").removeprefix("true_").removeprefix("r")
    return _ENTERED.get(key) or _ENTERED.get(op.strip("_")) or _NONFINITE_OPS.get(op.strip("_"), _NONFINITE_ANY)


def nonfinite_reason_fix(op: str) -> tuple:
    """(why, fix) for an op whose backward produced the first inf/nan gradient (``op``: its name as called)."""
    key = op.strip("_").removeprefix("true_").removeprefix("floor_")
    return _NONFINITE_OPS.get(key, _NONFINITE_ANY)
