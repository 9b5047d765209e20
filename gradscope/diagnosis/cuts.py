"""A cut on the data path from a tensor to a backward root: finding it (:func:`data_cut`, shared by the
none and failure rules) as a Finding (worded by :mod:`.templates_cuts`)."""
from __future__ import annotations

import re

from ..core.explanation import PathStep
from ..core.model import Cause, Frame, Site
from . import templates as say  # noqa: F401  (registers the wording the findings here name)
from . import templates_cuts as say_cut  # noqa: F401
from .common import _EXPLICIT_ITEM, _REWRAP_CODE, _find_in_function, _first_arg, _opname, _sgd_rebind, _short
from .finding import found


def _as_written(cause, se):
    """The cause by the mechanism the user wrote: ``torch.FloatTensor([a, b])`` / ``torch.tensor([p, q])`` of
    tensors converts each with ``float()`` inside torch, which is recorded as an ``.item()``; the user wrote
    a re-wrap (fix: torch.stack / torch.cat), unless the line itself calls .item()/float()/.tolist()."""
    if cause == "item_roundtrip" and se.site is not None and _REWRAP_CODE.search(se.site.code or "") \
            and not _EXPLICIT_ITEM.search(se.site.code or ""):
        return Cause.TENSOR_REWRAP
    return cause


def _copied_into_new_param(ix, steps, tid, name):
    """After the cut, the values were copied into a different trainable parameter (a rebuilt model loaded with
    load_state_dict): the forward uses that new parameter, the optimizer this one. param_recreated at the
    new parameter's creation (the user's `model = build(cfg)` is in its stack)."""
    owners = ix.d.meta.get("param_owner") or {}
    for x in steps:
        # a whole-value copy (load_state_dict, copy_), not an EMA update (mul_/add_/lerp_)
        tgt = x.detail.target if x.kind == "inplace" and _opname(x) in ("copy_", "set_") else None
        info = ix.d.tensors.get(tgt) if tgt is not None else None
        if info is None or tgt == tid or info.role != "param" or not info.requires_grad:
            continue
        if ix.trainable and tgt in ix.trainable:
            continue  # (both held by an optimizer: not a stale copy)
        if ix.trainable and tid not in ix.trainable:
            continue
        if not any(e.grad_enabled and e.context == "user" and any(r.tid == tgt and r.requires_grad for r in e.inputs)
                   for e in ix.ev[x.index + 1:]):
            continue  # (the copy is not what the forward trains: a target network run under no_grad)
        o = owners.get(str(tgt))
        site = Site.from_json(o["site"]) if o and o.get("site") else x.site
        new = ix.label(tgt)
        return found(Cause.PARAM_RECREATED, site, name, "data_cut.copied_into_new_param", name, new, site, x,
                     evidence=[x])
    return None


def _into_other_param(ix, steps, tid) -> bool:
    """The path goes on through a whole-value copy (load_state_dict, copy_) into another parameter."""
    for x in steps:
        tgt = x.detail.target if x.kind == "inplace" and _opname(x) in ("copy_", "set_") else None
        info = ix.d.tensors.get(tgt) if tgt is not None else None
        if info is not None and tgt != tid and info.role == "param":
            return True
    return False


def custom_output_cut(ix, path):
    """A custom autograd.Function on ``path`` (events in order) whose output, used outside it, does not require grad
    although what went in did: ``(how, cls, site, e, nx)`` with ``how`` "marked" (ctx.mark_non_differentiable(), the
    site its line), "nested" (apply() ran it, but the tensor went in inside a tuple, list or dict argument: the site
    the apply line) or "forward" (forward() called directly: the site where its output is used); ``e`` the last event
    inside it, ``nx`` the first outside. None when there is none."""
    for k in range(len(path) - 1):
        e, nx = path[k], path[k + 1]
        if e.context != "custom_function" or nx.context == "custom_function":
            continue
        passed = set(e.output_ids()) & set(nx.input_ids())
        refs = [r for r in nx.inputs if r.tid in passed]
        if not refs or any(r.requires_grad for r in refs):
            continue
        j = k
        while j > 0 and path[j - 1].context == "custom_function":
            j -= 1
        if not any(r.requires_grad for r in path[j].inputs):
            continue
        fn = e.site.function if e.site else ""
        cls = fn.rsplit(".", 1)[0] if "." in fn else "the custom Function"
        hit = _find_in_function(e.site.filename, e.site.lineno, "mark_non_differentiable(") if e.site else None
        if hit is not None:
            site = Site(e.site.filename, hit[0], fn, hit[1], e.site.stack[:-1] + (Frame(e.site.filename, hit[0], fn,
                                                                                           hit[1]),),
                        ix.file_label(e.site.filename))
            return "marked", cls, site, e, nx
        stack = e.site.stack if e.site else ()
        call = stack[-2] if len(stack) >= 2 else None  # the user line that ran the Function
        if call is not None and ".forward(" not in (call.code or ""):
            # apply() ran it and still made no graph: the tensor that needs grad went in inside a tuple, list or
            # dict argument, which autograd does not look into
            return "nested", cls, ix.frame_site(call, stack[:-2]), e, nx
        return "forward", cls, nx.site, e, nx
    return None


_CUSTOM_CUT = {"marked": (Cause.NONDIFFERENTIABLE_OP, "data_cut.custom_marked"),
               "nested": (Cause.CUSTOM_FUNCTION, "data_cut.custom_nested_args"),
               "forward": (Cause.NONDIFFERENTIABLE_OP, "data_cut.custom_forward")}


def _custom_output_cut(ix, path, name):
    """The Finding for :func:`custom_output_cut` on ``path`` (``name``'s way to the loss), or None."""
    hit = custom_output_cut(ix, path)
    if hit is None:
        return None
    how, cls, site, e, nx = hit
    cause, wording = _CUSTOM_CUT[how]
    return found(cause, site, name, wording, name, cls, nx if how == "forward" else site, evidence=[e, nx])


def find_data_cut(ix, tid, name, real):
    """The cut on the data path from ``tid`` to the roots of the backward calls ``real`` (newest first), or a
    cut in its cone whose data never came back visibly, as a Finding; None when there is none."""
    for b in reversed(real):
        roots = b.detail.roots or b.input_ids()
        path = None
        for no_writes in (True, False):  # a path through the forward first, through in-place writes after
            path = ix.path_to(tid, roots, before=b.index, no_writes=no_writes)
            if path and (ix.cut_on_path(path, tid) is not None or _custom_output_cut(ix, path, name)):
                break
        if not path:
            continue
        hit = ix.cut_on_path(path, tid)
        if hit is None:
            res = _custom_output_cut(ix, path, name)
            if res is not None:
                return res
            continue
        k, e = hit
        if ix.feeds_loss_target(e):
            # a detached (or no_grad) target of a loss, the usual idiom (`mse_loss(z_q, z_e.detach())`): a cut on
            # another path to the loss, when there is one, is the one that matters
            other = ix.path_to(tid, roots, before=b.index, no_writes=True, avoid={e.index})
            hit2 = ix.cut_on_path(other, tid) if other else None
            if hit2 is not None:
                path, (k, e) = other, hit2
        moved = _copied_into_new_param(ix, path[k:], tid, name)
        if moved is not None:
            return moved
        if _into_other_param(ix, path[k:], tid):
            continue  # (the path reaches the loss through a copy into a target network: that model's own use)
        cause, se = ix.cause_of_cut(e, path, k)
        return cut_finding(ix, tid, name, _as_written(cause, se), se, e, path, k, ix.root_label(b))
    # no complete path: a cut whose data never came back visibly (not one in a target network its values were
    # copied into: that model's no_grad use is its own)
    cone = ix.cone(tid, through_copies=False)
    # a cut after the last backward (an evaluation under no_grad after training) cannot have kept a
    # gradient from that backward
    last = real[-1].index if real else len(ix.ev)
    cuts = [e for e in cone if e.kind == "cut" and e.cut != "zero_grad_op" and e.context == "user"
            and e.index < last]
    if cuts and all(not e.grad_enabled for e in cuts) and any(
            e.grad_enabled and e.context == "user" and e.kind in ("op", "module") and tid in e.input_ids()
            for e in ix.ev[:last]):
        # it was also used with grad on before the backward and that result went nowhere: the uses under
        # no_grad (an evaluation between training epochs) are not what kept the gradient away
        return None
    if cuts:
        roots = set()
        for b in real:
            roots.update(b.detail.roots or b.input_ids())
        # prefer a cut whose result was used (not the unused indices of a max()), then one that could carry a
        # gradient if undone (not the integer indices of a topk/max/sort, which route by design: a mixture of
        # experts' top-k beside its detached gate weights), then one whose input required grad, then the earliest
        e = min(cuts, key=lambda c: (not _cut_result_used(ix, c), c.detail.outputs_of is not None,
                                     not any(r.requires_grad for r in c.inputs), c.index))
        path = _chain_to(ix, tid, e) or [x for x in cone if x.index <= e.index]
        k = len(path) - 1 if path and path[-1] is e else None
        cause, se = ix.cause_of_cut(e, cone, cone.index(e))
        return cut_finding(ix, tid, name, _as_written(cause, se), se, e, path, k,
                                     ix.root_label(real[-1]) if real else "the loss", returned=False)
    return None


def _cut_result_used(ix, e) -> bool:
    """Was what cut ``e`` made without history used afterwards: values that left autograd (.item(), .numpy(),
    .tolist()), or a result without history that something consumed? (A max()'s indices nobody reads: no.)"""
    if e.cut in ("item", "numpy", "tolist") or ix.value_users.get(e.index):
        return True
    cut_outs = [r.tid for r in e.outputs if not r.requires_grad]
    if not e.outputs:
        return True
    return any(ix.consumers.get(t) for t in cut_outs)


def _chain_to(ix, tid, e):
    """The data path from ``tid`` to cut ``e`` (ending with it), or None."""
    outs = list(e.output_ids())
    if outs:
        chain = ix.path_to(tid, outs, before=e.index + 1, no_writes=True)
        return chain if chain and chain[-1] is e else None
    ins = [r.tid for r in e.inputs if r.tid != tid]
    if not ins:
        return [e]
    chain = ix.path_to(tid, ins, before=e.index, no_writes=True)
    return chain + [e] if chain else None


def cut_finding(ix, tid, name, cause, se, e, path, k, root, returned=True):
    rebind = _sgd_rebind(se.site) if cause == "no_grad_block" else None
    # a region cause is reported at the line that opened the region (a manual update at the update itself)
    site = ix.region_site(se) if cause in ("no_grad_block", "inference_mode") and not rebind else se.site
    if cause == "reentrant_checkpoint" and site is not None:  # the checkpoint(...) call, not a line inside
        for i in range(len(site.stack) - 1, -1, -1):
            fr = site.stack[i]
            if "checkpoint" in (fr.code or "") and i < len(site.stack) - 1:
                site = ix.frame_site(fr, site.stack[:i])
                break
    off_by = ix.grad_switched_off_by(se) if cause == "no_grad_block" else None
    what = ix.cut_input_label(e, tid)
    plain = bool(re.fullmatch(r"[A-Za-z_][\w\.\[\]]*", what)) and not (what.startswith("t") and what[1:].isdigit())
    came_back = None
    if cause in ("numpy_roundtrip", "item_roundtrip", "tolist_roundtrip"):
        back = [x for x in (path or []) if x.detail.links]
        if back and back[0].site:
            came_back = back[0]
    users = {i for o in e.output_ids() for i in ix.consumers.get(o, ()) if ix.ev[i].kind != "module"}
    cached = cause in ("inference_mode", "no_grad_block") and ix.computed_once_reused(se)
    copied = None  # torch.tensor(z, ...) of one tensor (not a list): use z itself
    listed = None  # torch.tensor([a, b]): the list as written
    if cause == "tensor_rewrap" and site is not None:
        arg = (_first_arg(site.code or "", "tensor(") or _first_arg(site.code or "", "as_tensor(")
               or _first_arg(site.code or "", "Variable(") or _first_arg(site.code or "", "Tensor("))
        if arg and re.fullmatch(r"[A-Za-z_][\w.]*", arg):
            copied = arg
        elif arg and arg.startswith("[") and arg.endswith("]"):
            listed = arg  # torch.tensor([a, b]) of tensors: each one is converted with float()
    decorated = None  # the region is a @torch.no_grad() decorator on a helper the forward calls
    if cause == "no_grad_block" and se.site is not None:
        g = ix.governing_grad_mode(se)
        code = (g.site.code or "").lstrip() if g is not None and g.site is not None else "with"
        if not code.startswith(("with", "torch.set_grad_enabled", "torch._C")):  # a call into a decorated function
            for k, fr in enumerate(se.site.stack):
                if fr.filename == g.site.filename and fr.lineno == g.site.lineno and k + 1 < len(se.site.stack):
                    decorated = se.site.stack[k + 1].function
                    break
    facts = dict(
        cause=cause, name=name, root=root, returned=returned, what=what, site=site, se_site=se.site, plain=plain, users=users,
        came_back=came_back, copied=copied, listed=listed, rebind=rebind, off_by=off_by, decorated=decorated,
        cached=cached, lib=ix.lib_name(e) if cause == "param_recreated" else None,
        nograd_lib=ix.nograd_lib(e) if cause == "nondifferentiable_op" else None, e=e)
    steps = [PathStep(name)]
    for j, x in enumerate(path or []):
        if x.kind == "module":
            continue
        cut_here = (x is se) if (se is not None and se in (path or [])) else (j == k)
        steps.append(PathStep(_opname(x) if x.kind != "external" else _short(x.op), x.op, x.site, flows=not cut_here,
                              note=f"cut: {_opname(x)}()" if cut_here else ""))
    if returned:
        steps.append(PathStep(root))
    ev = [e] + ([se] if se is not e else [])
    return found(cause, site, name, "data_cut", path=steps, evidence=ev, **facts)
