"""Errors PyTorch raises at one line whose cause is an earlier one (status `failure`): ``backward()`` of a loss
that is not a scalar (the line that made it so), ``retain_grad()`` / ``register_hook`` on a tensor that does not
require grad (where it was made, or the no_grad block it was made in), a tensor hook that changed a gradient's size
or dtype (its registration), ``autograd.grad`` of an input that does not require grad (where it was made), a
reentrant checkpoint under ``autograd.grad`` (the checkpoint call). One rule, :func:`raised_upstream`, over the
table :data:`UPSTREAM`; the wording per form is in :mod:`.templates_raised`."""
from __future__ import annotations

import re

from ..core.model import Cause, Frame, Site
from . import templates_raised as say  # noqa: F401  (registers the wording the findings here name)
from .common import _call_args, _find_in_function, _opname, _receiver, unnamed
from .finding import found
from .registry import rule


def _in_caller(ix, site: Site | None, where: Site | None) -> Site | None:
    """``site`` seen from the function of ``where`` (the line that raised): the frame of ``site``'s stack in that
    function (`x, y = _data()` for a tensor made inside the helper), else ``site`` itself."""
    if site is None or where is None:
        return site
    for i in range(len(site.stack) - 1, -1, -1):
        f = site.stack[i]
        if f.filename == where.filename and f.function == where.function:
            return ix.frame_site(f, site.stack[:i]) if i < len(site.stack) - 1 else site
    return site


def _made(ix, tid, where):
    """(the line that made tensor ``tid``, seen from the function of ``where``, the event) or (None, None)."""
    p = ix.d.producer(tid)
    if p is None or p.site is None:
        return None, None
    return _in_caller(ix, p.site, where), p


_ELEMENTWISE = {"mul", "__mul__", "__rmul__", "add", "__add__", "__radd__", "sub", "__sub__", "__rsub__", "div",
                "__truediv__", "__rtruediv__", "neg", "__neg__", "pow", "__pow__", "abs", "clamp", "where"}


def _named(ix, tid, where, call):
    """The label of ``tid``, or the expression the failing line calls ``call`` on (`img.retain_grad()`: img)."""
    name = ix.label(tid)
    if unnamed(name) and where is not None:
        name = _receiver(where.code or "", call) or name
    return name


def _through_elementwise(ix, p, shape):
    """From the call ``p`` back through element-wise arithmetic on a result of ``shape`` (a weighting of a per-sample
    loss) to the call that made it; ``p`` itself when it is no such arithmetic."""
    for _ in range(16):
        if p is None or _opname(p) not in _ELEMENTWISE:
            break
        ups = [ix.d.producer(r.tid) for r in p.inputs if r.requires_grad and tuple(r.shape) == tuple(shape)]
        ups = [u for u in ups if u is not None and u.site is not None]
        if not ups:
            break
        p = ups[0]
    return p


def _nonscalar(ix, e, m, where):
    """The call that made the loss more than one element: back through element-wise arithmetic on it (a weighting
    of a per-sample loss) to the call that made it (the loss with reduction='none', a model's output)."""
    if e is None or e.kind != "backward" or not e.inputs:
        return None
    tid = e.inputs[0].tid
    shape = ix.d.tensors[tid].shape if tid in ix.d.tensors else ()
    p = _through_elementwise(ix, ix.d.producer(tid), shape)
    if p is None or p.site is None:
        return None
    # (the line itself, also inside a loss module or helper: that is where the reduction goes; its caller is in
    # the site's stack)
    return p.site, (_named(ix, tid, where, ".backward("), list(shape)), p


def _not_requiring(ix, e, m, where):
    if e is None or not e.inputs:
        return None
    site, p = _made(ix, e.inputs[0].tid, where)
    if p is not None and not p.grad_enabled:  # made under no_grad: the block that switched grad off
        site = ix.region_site(p) or site
    call = ".retain_grad(" if "retain_grad" in m.group(0) else ".register_hook("
    return (site, (_named(ix, e.inputs[0].tid, where, call), bool(p is not None and not p.grad_enabled)), p) \
        if site else None


def _grad_input(ix, e, m, where):
    if e is None or e.kind != "backward":
        return None
    for tid in e.detail.inputs or ():
        info = ix.d.tensors.get(tid)
        if info is not None and not info.requires_grad:
            site, p = _made(ix, tid, where)
            if site is not None:
                return site, (ix.label(tid),), p
    return None


def _hook(ix, e, m, where):
    name = m.group(1)
    hooks = [h for h in ix.ev if h.kind == "hook" and h.site is not None and (e is None or h.index < e.index)]
    named = [h for h in hooks if (h.detail.hook or "").rsplit(".", 1)[-1] == name] or hooks
    if not named:
        return None
    h = named[-1]
    return h.site, (ix.label(h.input_ids()[0]) if h.inputs else None, m.group(2)), h


def _checkpoint(ix, e, m, where):
    for x in ix.ev:
        if x.context == "checkpoint" and x.site is not None:
            for i in range(len(x.site.stack) - 1, -1, -1):
                f = x.site.stack[i]
                if "checkpoint(" in (f.code or ""):
                    return ix.frame_site(f, x.site.stack[:i]), (), x
    return None


_ASSIGN = " = "  # (the source text of an assignment, searched for)
_DTYPES = {"Double": "float64", "Float": "float32", "Half": "float16", "BFloat16": "bfloat16", "Long": "int64",
           "Int": "int32", "Bool": "bool"}


def _dtype(ix, e, m, where):
    """The input of the failing call whose dtype is the one the message found: where it was made."""
    found_dt = _DTYPES.get(m.group(1), m.group(1).lower())
    for r in (e.inputs if e is not None else ()):
        info = ix.d.tensors.get(r.tid)
        if info is not None and info.dtype == found_dt:
            site, p = _made(ix, r.tid, where)
            if site is None:  # made by a call the trace does not see (torch.from_numpy): its assignment, by name
                site = _assigned(ix, ix.label(r.tid), where)
            if site is not None:
                return site, (ix.label(r.tid), found_dt, _DTYPES.get(m.group(2), m.group(2).lower())), p
    return None


def _assigned(ix, name, where):
    """The line of ``where``'s function that assigns ``name`` (`target = torch.from_numpy(...)`), or None."""
    if where is None or not name or unnamed(name) or not name.isidentifier():
        return None
    hit = _find_in_function(where.filename, where.lineno, name + _ASSIGN)
    if hit is None or hit[0] >= where.lineno:
        return None
    return Site(where.filename, hit[0], where.function, hit[1], where.stack[:-1] + (
        Frame(where.filename, hit[0], where.function, hit[1]),), where.label)


def _written(ix, e, m, where):
    """The tensor a failing in-place call (or requires_grad_) was given: where it was made (a view under no_grad,
    a tensor made under inference_mode: the line inside the block)."""
    if e is None:
        return None
    tid = e.detail.target if e.kind == "inplace" and e.detail.target is not None else (
        e.inputs[0].tid if e.inputs else None)
    if tid is None:
        return None
    site, p = _made(ix, tid, where)
    if site is None:  # (a buffer made while the model was built: its registration)
        return None
    return site, (ix.label(tid),), p


_EXPANDING = {"expand", "expand_as", "broadcast_to"}
_VIEWING = {"__getitem__", "view", "view_as", "reshape", "narrow", "select", "t", "transpose", "permute",
            "unsqueeze", "squeeze", "flatten", "unflatten"}


def _expanded(ix, e, m, where):
    """The in-place write's target, back through views taken of it (`acc[:, :2] += ...`), to the expand that made
    its elements share memory; else where the target was made."""
    hit = _written(ix, e, m, where)
    if hit is None:
        return None
    p = hit[2]
    for _ in range(8):
        if p is None or _opname(p) in _EXPANDING:
            break
        p = ix.d.producer(p.inputs[0].tid) if _opname(p) in _VIEWING and p.inputs else None
    if p is None or p.site is None or _opname(p) not in _EXPANDING:
        return hit
    name = ix.label(p.output_ids()[0]) if p.outputs else hit[1][0]
    return _in_caller(ix, p.site, where), (name if not unnamed(name) else hit[1][0],), p


_GROUPS = "the parameter groups"


def _groups(ix, e, m, where):
    """Parameter groups that list a parameter twice: the line that built the groups the optimizer was given (its
    assignment when it was given a name, else the optimizer's line)."""
    if where is None:
        return None
    args = _call_args(where.code or "")
    site = _assigned(ix, args[0], where) if args else None
    return (site or where), (args[0] if args else _GROUPS,), None


def _non_leaf_param(ix, e, m, where):
    """An optimizer given a computed tensor: where the tensor it was given was made (the `.double()` or `.to()`
    after requires_grad=True), found by the names the optimizer's line passes."""
    if where is None:
        return None
    names = set(re.findall(r"[A-Za-z_][\w.]*", ",".join(_call_args(where.code or ""))))
    best = None
    for tid, info in ix.d.tensors.items():
        if info.requires_grad and not info.is_leaf and ix.label(tid) in names:
            p = ix.d.producer(tid)
            if p is not None and p.site is not None and (best is None or p.index > best[1].index):
                best = (tid, p)
    if best is None:
        return None
    tid, p = best
    return _in_caller(ix, p.site, where), (ix.label(tid), _opname(p)), p


def _func_nonscalar(ix, e, m, where):
    """torch.func.grad of a function that returned more than one element: the last call inside the transform
    (its result is what the function returned), back through element-wise arithmetic as for backward()."""
    lim = e.index if e is not None else len(ix.ev)
    last = next((x for x in reversed(ix.ev[:lim]) if x.kind in ("op", "cut") and x.context == "functorch"
                 and x.outputs and len(x.outputs[0].shape) > 0 and x.site is not None), None)
    if last is None:
        return None
    tid = last.outputs[0].tid
    shape = last.outputs[0].shape
    p = _through_elementwise(ix, last, shape)
    return p.site, (ix.label(tid), list(shape)), p


def _hooked_inplace(ix, e, m, where):
    """An in-place op on the output of a module with a full backward hook: the in-place module's construction
    when its variable is assigned in the function that raised (`act = nn.ReLU(inplace=True)`), else the line."""
    if e is None or e.kind != "inplace":
        return None
    mod = e.module or ""
    site = _assigned(ix, mod, where) if mod.isidentifier() else None
    return (site or e.site or where), (mod or _opname(e), _opname(e)), e


_SELF_ASSIGN = re.compile(r"^\s*self\.(\w+)\s*(?::[^=]+)?=(?!=)")


def _deepcopied(ix, e, m, where):
    """copy.deepcopy met a computed tensor: a weight recomputed by the old torch.nn.utils.weight_norm (the call
    that applied it), else the last tensor with history a module kept as an attribute (`self.cache = ...`)."""
    lim = e.index if e is not None else len(ix.ev)
    wn = [x for x in ix.ev[:lim] if x.kind == "op" and _opname(x) == "_weight_norm" and x.site is not None]
    if wn:
        return _in_caller(ix, wn[0].site, where), ("weight_norm", None), wn[0]
    for x in reversed(ix.ev[:lim]):
        if x.kind != "op" or x.context != "user" or x.site is None or not any(
                r.requires_grad and not r.is_leaf for r in x.outputs):
            continue
        hit = _SELF_ASSIGN.match(x.site.code or "")
        if hit is not None and ix.last_on_line(x) is x:
            return x.site, ("attribute", hit.group(1)), x
    return None


_SAVE_CALL = "save_for_backward("


def _saved_non_tensor(ix, e, m, where):
    """ctx.save_for_backward given a non-tensor: the call in the custom Function's forward that ran last (its
    ops are recorded inside it), read from that function's source."""
    inside = [x for x in ix.ev if x.context == "custom_function" and x.site is not None]
    for x in reversed(inside):
        f = x.site.stack[-1] if x.site.stack else x.site.frame()
        hit = _find_in_function(f.filename, f.lineno, _SAVE_CALL)
        if hit is not None:
            site = ix.frame_site(Frame(f.filename, hit[0], f.function, hit[1]), x.site.stack[:-1])
            return site, (f.function.rsplit(".", 1)[0], int(m.group(1)), m.group(2)), x
    return None


def _clip(ix, e, m, where):
    """clip_grad_norm_ found an inf/nan gradient: where the inf/nan entered the forward of the last backward."""
    for b in reversed(ix.d.backwards):
        node, src = ix.nonfinite_source(b)
        entry = ix.nonfinite_entry(b, src or ix.enclosing_event(b, node))
        hit = entry or src
        if hit is not None and hit.site is not None:
            return _in_caller(ix, hit.site, where), (_opname(hit),), hit
    return None


#: message pattern -> (cause, the wording form, what finds the line that caused it)
UPSTREAM = tuple((re.compile(p, re.S), c, f, fn) for p, c, f, fn in (
    (r"grad can be implicitly created only for (?:real )?scalar outputs", Cause.NONSCALAR_BACKWARD, "nonscalar",
     _nonscalar),
    (r"can't retain_grad on Tensor that has requires_grad=False", Cause.RETAIN_GRAD_NO_GRAD, "retain_grad",
     _not_requiring),
    (r"cannot register a hook on a tensor that doesn't require gradient", Cause.HOOK_ON_NO_GRAD_TENSOR,
     "hook_no_grad", _not_requiring),
    (r"hook '([^']*)' has changed the (size|type) of value", Cause.HOOK_CHANGED_GRADIENT, "hook_changed", _hook),
    (r"One of the differentiated Tensors does not require grad", Cause.INPUT_NOT_REQUIRING_GRAD, "grad_input",
     _grad_input),
    (r"When use_reentrant=True, torch\.utils\.checkpoint is incompatible with \.grad\(\)",
     Cause.REENTRANT_CHECKPOINT, "reentrant_grad", _checkpoint),
    (r"Found dtype (\w+) but expected (\w+)", Cause.DTYPE_MISMATCH, "dtype", _dtype),
    (r"A view was created in no_grad mode and is being modified inplace with grad mode enabled",
     Cause.NO_GRAD_VIEW_INPLACE, "no_grad_view", _written),
    (r"more than one element of the written-to tensor refers to a single memory location",
     Cause.INPLACE_ON_EXPANDED, "expanded", _expanded),
    (r"some parameters appear in more than one parameter group", Cause.PARAM_IN_TWO_GROUPS, "two_groups",
     _groups),
    (r"can't optimize a non-leaf Tensor", Cause.OPTIMIZE_NON_LEAF, "non_leaf_param", _non_leaf_param),
    (r"torch\.utils\.checkpoint: (?:A different number of tensors was saved|Recomputed values for the following "
     r"tensors have different)", Cause.CHECKPOINT_RECOMPUTE_MISMATCH, "recompute_mismatch", _checkpoint),
    (r"Expected to mark a variable ready only once", Cause.DDP_MARKED_TWICE, "ddp_marked_twice", _checkpoint),
    (r"Expected f\(\*args\) to return a scalar Tensor, got tensor with (\d+) dims", Cause.NONSCALAR_BACKWARD,
     "func_nonscalar", _func_nonscalar),
    (r"Output \d+ of BackwardHookFunction\w* is a view and is being modified inplace", Cause.BACKWARD_HOOK_INPLACE,
     "hooked_inplace", _hooked_inplace),
    (r"Only Tensors created explicitly by the user \(graph leaves\) support the deepcopy protocol",
     Cause.DEEPCOPY_NON_LEAF, "deepcopy", _deepcopied),
    (r"save_for_backward can only save variables, but argument (\d+) is of type (\w+)",
     Cause.SAVE_FOR_BACKWARD_NON_TENSOR, "save_non_tensor", _saved_non_tensor),
    (r"(?:Inplace update to|Setting requires_grad=True on) inference tensor outside InferenceMode",
     Cause.INFERENCE_MODE, "inference_tensor", _written),
    (r"The total norm of order [\d.]+ for gradients from `parameters` is non-finite", Cause.NONFINITE_GRADIENT,
     "clip_nonfinite", _clip),
))

#: any message of :data:`UPSTREAM` (the error table's entry for :func:`raised_upstream`)
ANY = re.compile("|".join(f"(?:{p.pattern})" for p, _, _, _ in UPSTREAM), re.S)


@rule("failure", 107)
def raised_upstream(dx, q):
    """An error raised at one line whose cause is an earlier line (the table :data:`UPSTREAM`): the cause, that
    line, the line that raised it as an extra site."""
    for pattern, cause, form, find in UPSTREAM:
        m = pattern.search(q.msg)
        if m is None:
            continue
        x, e = dx.d.exception, dx.error_event()
        where = (e.site if e else None) or x.site
        hit = find(dx, e, m, where)
        if hit is None:
            return None
        site, facts, ev = hit
        res = found(cause, site, "the step", f"raised_upstream.{form}", site, where, *facts,
                    evidence=[y for y in (ev, e) if y is not None])
        if where is not None and site is not None and where.short != site.short:
            res.extra_sites.append(where)
        return res
    return None
