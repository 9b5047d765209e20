"""Rules for a backward that raised (status `failure`), one per kind of PyTorch error; the message
patterns that select them are the table in :mod:`.errors`."""
from __future__ import annotations

import re

from ..core.explanation import PathStep
from ..core import _source
from ..core.model import Cause, Frame
from . import templates_failure as say
from .common import _EXPLICIT_CUTS, _NOT_USERS, _opname, _sgd_rebind, _undone_later, in_installed_package
from .finding import Finding, found
from .registry import rule



@rule("failure", 10)
def inplace_modified_saved_tensor(dx, q):
    """An in-place write into a tensor autograd saved for backward: the write, the op that saved it."""
    msg = q.msg
    m = re.search(r"\[torch\.\w+ \[([\d, ]*)\]\]", msg)
    shape = tuple(int(s) for s in m.group(1).split(",") if s.strip()) if m else None
    mv = re.search(r"is at version (\d+); expected version (\d+)", msg)
    expected = int(mv.group(2)) if mv else None
    mo = re.search(r"output (\d+) of (\w+)", msg)
    node = mo.group(2) if mo else None
    bw = dx.failing_backward()
    limit = bw.index if bw else len(dx.ev)
    # one candidate per written tensor: (event, target, base, version before, saved, saved_by)
    cands = []
    for e in dx.ev[:limit]:
        if not (e.kind == "inplace" or (e.kind == "cut" and e.cut == "data_set")):
            continue
        d = e.detail
        if d.targets and d.versions_before:  # optimizer.step(): every parameter it wrote
            saved = set(d.saved or ())
            by = d.saved_by or {}
            for t, vb in zip(d.targets, d.versions_before):
                cands.append((e, t, None, vb, t in saved, by.get(t, by.get(str(t)))))
        else:
            cands.append((e, d.target, d.base, d.version_before, bool(d.saved), d.saved_by))

    def fam_shapes(tgt, base):
        out = set()
        for t in (tgt, base):
            if t is not None and t in dx.d.tensors:
                out.add(tuple(dx.d.tensors[t].shape))
                for v in dx.d.tensors.values():  # other views of the same base
                    if v.base == t:
                        out.add(tuple(v.shape))
        return out

    def numel(s):
        n = 1
        for x in s:
            n *= x
        return n

    def score(c):
        e, tgt, base, vb, saved, _ = c
        s = 0
        if saved:
            s += 4
        if shape is not None:
            fs = fam_shapes(tgt, base)
            if shape in fs:
                s += 3
            elif any(numel(f) == numel(shape) for f in fs):
                s += 1
        if expected is not None and vb == expected:
            s += 2
        return s

    best = None
    for c in cands:  # (ties go to the latest write before backward)
        sc = score(c)
        if sc >= 3 and (best is None or sc >= best[0]):
            best = (sc, c)
    if best is None:
        return found(
            Cause.INPLACE_SAVED_TENSOR, bw.site if bw else None, "backward", "inplace_modified_saved_tensor.unseen", msg,
            evidence=[bw] if bw else [])
    e, tgt, base, _, _, saver = best[1]
    se = dx.ev[saver] if isinstance(saver, int) and 0 <= saver < len(dx.ev) else None
    tname = dx.label(tgt) if tgt is not None else None
    view = tgt is not None and base is not None and tname == f"t{tgt}" and dx.label(base) != f"t{base}"
    if view:
        tname = dx.label(base)  # an unnamed view (w[i], w[:, k]) of a named tensor: name the tensor
    # the written tensor made by `z = y.detach()`: it shares y's memory and version counter, so the write went into
    # y (a `.data` alias shares no version counter: backward does not fail, see corrupting_writes); (y's name, site)
    made = dx.d.producer(tgt) if tgt is not None and not view else None
    alias = ((dx.label(made.inputs[0].tid), made.site)
             if made is not None and made.kind == "cut" and made.cut == "detach" and made.inputs else None)
    return found(
        Cause.INPLACE_SAVED_TENSOR, e.site, say.saved_tensor_name(tname),
        "inplace_modified_saved_tensor", e, tname, view, se, node,
        any(b.kind == "backward" and b.detail.retain_graph and b.index < e.index for b in dx.ev), alias,
        path=[PathStep(_opname(se), se.op, se.site, note="saved for backward")] if se else [],
        evidence=[e] + ([se] if se else []))


_SET_FROM_NAME = re.compile(r"requires_grad(?:_\(\s*|\s*=\s*)([A-Za-z_]\w*)\s*\)?\s*(?:#.*)?$")


def _said_false(dx, site):
    """A freeze's site seen from its caller when the line sets requires_grad from a variable (`p.requires_grad =
    flag` inside `set_requires_grad(net, False)`): the value was chosen by the call one frame up."""
    m = _SET_FROM_NAME.search((site.code or "") if site is not None else "")
    if m is None or m.group(1) in ("True", "False") or len(site.stack) < 2:
        return site
    return dx.frame_site(site.stack[-2], site.stack[:-2])


def _for_this_backward(dx, f, bw) -> bool:
    """The freeze ``f`` ran in the same call of the function that runs ``bw``, before it (after any earlier run
    of that backward line)."""
    if bw is None or f.site is None or bw.site is None:
        return False
    fr = next((x for x in f.site.stack if x.filename == bw.site.filename and x.function == bw.site.function), None)
    if fr is None or fr.lineno >= bw.site.lineno:
        return False
    before = [b.index for b in dx.backward_events() if b.index < bw.index and b.site is not None
              and b.site.short == bw.site.short]
    return not before or f.index > before[-1]


def _cut_finding(dx, bw, root, evs, tids):
    """A failing backward's loss with no history: the freeze or the cut on its inputs that removed it (or None)."""
    frozen = [e for e in dx.ev if e.kind == "requires_grad" and e.detail.value is False
              and set(e.input_ids()) & tids and (bw is None or e.index < bw.index)]
    # a freeze made for this backward (earlier in the same call of the function that runs it: a GAN's D frozen for
    # G's step) is meant; one left from another phase (G frozen in the D step, never unfrozen) is the cause
    # a training framework's own temporary freeze (Lightning's toggle_optimizer freezing the other model) beside a
    # cut the user wrote: the user's cut
    framework = [f for f in frozen if f.site is not None and in_installed_package(f.site.filename)]
    if framework and any(e.kind == "cut" and e.cut in _USER_CUTS and e.context == "user"
                         and any(r.requires_grad for r in e.inputs) for e in evs):
        frozen = [f for f in frozen if f not in framework]
    meant_here = [f for f in frozen if _for_this_backward(dx, f, bw)]
    if meant_here and len(meant_here) < len(frozen):
        frozen = [f for f in frozen if f not in meant_here]
    # a cut of a parameter that still requires grad (the student run inside the teacher's no_grad block)
    # explains it better than a freeze that was meant (the teacher's)
    # (not what torch did on the user's behalf: module.to() sets each parameter's .data)
    # (nor torch's own detach on the user's behalf: state_dict() of a pretrained copy loaded into the model)
    param_cut = any(e.kind == "cut" and e.context not in _NOT_USERS and e.context != "library" and any(
        r.requires_grad and r.is_leaf and dx.d.tensors.get(r.tid) is not None
        and dx.d.tensors[r.tid].role == "param" for r in e.inputs) for e in evs)
    # a freeze meant for this phase of the step (undone after it in the same function: a world model frozen while
    # the policy learns through it) beside a cut of a value that required grad: the cut. (Not "no optimizer trains
    # it": the optimizer that would has not stepped yet when a GAN's discriminator was left frozen.)
    meant = bool(frozen) and all(f.site is not None and _undone_later(f.site.filename, f.site.lineno)
                                 for f in frozen) and any(
        e.kind == "cut" and e.cut != "zero_grad_op" and e.context not in _NOT_USERS and e.context != "library"
        and any(r.requires_grad for r in e.inputs) for e in evs)
    # a freeze of parameters an optimizer had already stepped (trained, then frozen and never unfrozen: SAC's
    # critic frozen for the actor's update) outweighs a cut in a no_grad block of this step (the target)
    left = any(x.kind == "optimizer_step" and x.index < f.index and set(f.input_ids()) & set(x.detail.params or ())
               for f in frozen for x in dx.ev[:f.index])
    # a freeze made while a module was built (a feature extractor frozen in its __init__) beside a cut, in this
    # step, of a value that requires grad (the generator's output run under no_grad): the cut
    built = bool(frozen) and all(f.site is not None and any((x.function or "").endswith("__init__")
                                                           for x in f.site.stack) for f in frozen)
    value_cut = built and any(
        e.kind == "cut" and e.cut in _USER_CUTS and e.context not in _NOT_USERS and e.context != "library"
        and any(r.requires_grad and not r.is_leaf for r in e.inputs) for e in evs)
    if frozen and (not param_cut or left) and not meant and not value_cut:
        e = frozen[-1]
        names = sorted({dx.label(t) for f in frozen for t in f.input_ids() if t in tids})
        whole = dx.froze_everything(e)
        # (the line that set it, its stack holding the call that passed False: `set_requires_grad(net, False)`,
        # which the summary names)
        return found(
            Cause.FROZEN_PARAM, e.site, root, "no_grad_fn.frozen", whole, root, _said_false(dx, e.site), names,
            evidence=frozen[-3:])
    cuts = [e for e in evs if e.kind == "cut" and e.cut != "zero_grad_op" and e.context not in _NOT_USERS
            and any(r.requires_grad for r in e.inputs)]
    cuts = [e for e in cuts if e.context != "library"] or cuts  # the user's own cuts first
    if cuts:
        e = cuts[-1]
        k = evs.index(e)
        cause, se = dx.cause_of_cut(e, evs, k)
        rebind = _sgd_rebind(se.site) if cause == "no_grad_block" else None
        site = dx.region_site(se) if cause in ("no_grad_block", "inference_mode") and not rebind else se.site
        what = dx.cut_input_label(e, e.inputs[0].tid if e.inputs else None)
        cut = dx.cut_finding(e.inputs[0].tid if e.inputs else 0, what, cause, se, e, [], None, root)
        same = [c for c in cuts if c.site is not None and e.site is not None and c.site.stack == e.site.stack
                and c.cut == e.cut and c.op == e.op and e.cut in _EXPLICIT_CUTS and c.module == e.module]
        # several: one line, many tensors (a loop or comprehension: every parameter detached)
        labels = [dx.cut_input_label(c, c.inputs[0].tid if c.inputs else None) for c in same] if len(same) > 1 else []
        if len(set(labels)) == 1 and len(labels) > 1:  # one loop variable over distinct tensors: the block's names
            frame = dx.d.meta.get("frame_names") or {}
            named = [frame.get(str(c.inputs[0].tid)) for c in same if c.inputs]
            if len(named) == len(labels) and all(named) and len(set(named)) == len(named):
                labels = named
        off = dx.grad_switched_off_by(se) if cause == "no_grad_block" else None
        w = _sgd_rebind(site) if cause == "no_grad_block" else None
        if w:  # a manual SGD step that rebinds the leaf
            return found(cause, site, root, "no_grad_fn.rebind", root, w, site, se, labels, cut,
                         evidence=[e])
        return found(cause, site, root, "no_grad_fn.cut", off, root, what, site, se, labels, cut,
                     evidence=[e])
    return None


_USER_CUTS = _EXPLICIT_CUTS | {"no_grad", "inference_mode"}  # (cuts the user wrote: a call, or a region opened)


@rule("failure", 20)
def no_grad_fn(dx, q):
    """backward() on a result with no history: the cut (no_grad, detach, a frozen model) that removed it."""
    bw = dx.failing_backward()
    roots = (bw.detail.roots or bw.input_ids()) if bw else []
    root = dx.root_label(bw) if bw is not None and roots else "the loss"
    anc = dx.ancestors(roots, before=bw.index if bw else None) if roots else set()
    evs = [dx.ev[i] for i in sorted(anc)]
    tids = {r.tid for e in evs for r in e.inputs}
    ag = [e for e in evs if e.kind == "backward" and e.op == "torch.autograd.grad" and not e.detail.create_graph]
    # a cut the user wrote on a tensor that requires grad (`.data`, `.item()`, `.detach()`, an op inside a
    # `with torch.no_grad()` / inference_mode block) comes before an implicit one (gradients computed without
    # create_graph): the explicit cut decides below, the autograd.grad is named too
    explicit = [e for e in evs if e.kind == "cut" and e.cut in _USER_CUTS and e.context not in _NOT_USERS
                and any(r.requires_grad for r in e.inputs)]
    if ag and explicit:
        res = _cut_finding(dx, bw, root, evs, tids)
        if res is not None:
            res.extra_sites.extend(e.site for e in ag[-1:] if e.site is not None)
            return res
    if ag:
        e = ag[-1]
        return found(Cause.AUTOGRAD_GRAD_NOT_BACKWARD, e.site, root, "no_grad_fn.autograd_grad", root, e, evidence=[e])
    res = _cut_finding(dx, bw, root, evs, tids)
    if res is not None:
        return res
    def built_outside(t):  # no producer, or made by a factory from Python values (torch.tensor(float))
        info = dx.d.tensors.get(t)
        if info is None or info.producer is None:
            return True
        p = dx.d.producer(t)
        return p is not None and p.kind in ("op", "cut") and not p.inputs

    if not evs or all(built_outside(t) for t in roots):
        # the loss came from outside torch: the last value that left autograd before it
        lim = bw.index if bw else len(dx.ev)
        left = [e for e in dx.ev[:lim] if e.kind == "cut" and e.context == "user" and e.cut != "zero_grad_op"
                and any(r.requires_grad for r in e.inputs)]
        if left:
            e = left[-1]
            cause, se = dx.cause_of_cut(e)
            rebind = _sgd_rebind(se.site) if cause == "no_grad_block" else None
            site = dx.region_site(se) if cause in ("no_grad_block", "inference_mode") and not rebind else se.site
            what = dx.cut_input_label(e, e.inputs[0].tid if e.inputs else None)
            return found(
                cause, site, root, "no_grad_fn.outside_torch", root, what, site,
                dx.cut_finding(e.inputs[0].tid if e.inputs else 0, what, cause, se, e, [], None, root),
                evidence=[e] + ([se] if se is not e else []))
    params = [t for t in tids if dx.d.tensors.get(t) and dx.d.tensors[t].role == "param"
              and not dx.d.tensors[t].requires_grad]
    if params:
        use = dx.first_use(params[0])
        return found(
            Cause.FROZEN_PARAM, use.site if use else None, root, "no_grad_fn.frozen_params", root,
            [dx.label(p) for p in params],
            evidence=[use] if use else [])
    site = bw.site if bw else None
    leaves = [t for t in tids if dx.d.tensors.get(t) and dx.d.tensors[t].producer is None]
    rg = [t for t in leaves if dx.d.tensors[t].requires_grad]
    custom = dx.custom_output_cut([e for e in evs if e.kind != "module"]) if rg else None
    if custom is not None:  # a custom Function that made no graph (its tensors in a tuple; marked; forward() called)
        how, cls, csite, e, nx = custom
        return found(Cause.CUSTOM_FUNCTION if how == "nested" else Cause.NONDIFFERENTIABLE_OP, csite, root,
                     f"no_grad_fn.custom_{how}", root, cls, csite, evidence=[e, nx])
    if rg:  # trainable tensors went in, yet nothing recorded cut them off: say so, do not guess
        return found(Cause.UNKNOWN, site, root, "no_grad_fn.unseen_cut", root, [dx.label(t) for t in rg], evidence=[bw] if bw else [])
    # the one floating-point tensor it was computed from that the step made from nothing (a factory call:
    # `logits = torch.rand(...)`): the line that created it without requires_grad
    sources = [t for t in sorted(tids | set(roots)) if built_outside(t) and dx.d.tensors.get(t) is not None
               and dx.d.tensors[t].dtype.startswith(("float", "complex", "bfloat"))]
    made = dx.d.producer(sources[0]) if len(sources) == 1 else None
    if made is not None and made.site is not None and made.context == "user":
        return found(Cause.REQUIRES_GRAD_FALSE, made.site, root,
                     "no_grad_fn.source", root, dx.label(sources[0]), made, evidence=[made] + ([bw] if bw else []))
    return found(
        Cause.REQUIRES_GRAD_FALSE, site, root, "no_grad_fn", [dx.label(t) for t in leaves], root,
        evidence=[bw] if bw else [])


@rule("failure", 30)
def numpy_of_grad_tensor(dx, q):
    """.numpy() called on a tensor that requires grad."""
    e = dx.error_event()
    if e is None:
        for x in reversed(dx.ev):
            if x.kind == "cut" and x.cut == "numpy":
                e = x
                break
    what = dx.cut_input_label(e, e.inputs[0].tid) if e and e.inputs else "the tensor"
    return found(
        Cause.NUMPY_ROUNDTRIP, e.site if e else None, what, "numpy_of_grad_tensor", what, e,
        evidence=[e] if e else [])


@rule("failure", 40)
def inference_tensor_saved(dx, q):
    """A tensor made under inference_mode used by an op that saves it for backward."""
    e = dx.error_event()
    src = None
    if e is not None:
        for r in e.inputs:
            p = dx.d.producer(r.tid)
            if p is not None and p.inference_mode:
                src = p
                break
    site = src.site if src else (e.site if e else None)
    return found(
        Cause.INFERENCE_MODE, site, "the step", "inference_tensor_saved", site, e,
        evidence=[x for x in (src, e) if x])


@rule("failure", 60)
def once_differentiable(dx, q):
    """A second differentiation (create_graph=True: gradient penalty, double backward) through a custom
    Function whose backward is decorated with @once_differentiable."""
    node = dx.custom_node()
    if node is None:
        return None
    f = node.custom_backward
    site = dx.frame_site(f)
    fn = node.name.replace("Backward", "")
    cg = [e for e in dx.backward_events() if e.detail.create_graph]
    deco = _source.decorator_of(f.filename, f.lineno, "once_differentiable")
    res = found(Cause.CUSTOM_FUNCTION, site, fn, "once_differentiable", fn, cg, site, evidence=cg[-1:])
    if deco is not None:  # (the backward's return is the site, as for every custom_function; the decorator next)
        res.extra_sites.append(dx.frame_site(Frame(f.filename, deco[0], f.function, deco[1])))
    return res


@rule("failure", 70)
def custom_function_gradients(dx, q):
    """A custom autograd.Function's backward returned the wrong number or shape of gradients."""
    msg = q.msg
    m = re.search(r"[Ff]unction (\w+) returned", msg)
    bw = dx.failing_backward()
    node = dx.custom_node(m.group(1) if m else None)
    if node is None:
        return None
    f = node.custom_backward
    site = dx.frame_site(f)
    first = msg.splitlines()[0]
    return found(
        Cause.CUSTOM_FUNCTION, site, node.name.replace("Backward", ""), "custom_function_gradients", first, site, node,
        evidence=[bw] if bw else [])


#: aten names the messages use -> the name the op is called by in Python (``torch.special.gammainc`` runs igamma)
_ATEN_AS_CALLED = {"igamma": "gammainc", "igammac": "gammaincc"}


@rule("failure", 80)
def no_derivative(dx, q):
    """An op PyTorch has no derivative for, on the way to the loss."""
    msg = q.msg
    # torch words it "derivative for 'op' is not implemented", "derivative for aten::op is not implemented" and
    # "the derivative for 'op: input' is not implemented" (the input named after a colon)
    m = re.search(r"derivative for '?([\w\.:]+?)(?::\s[\w ]+)?'? is not implemented", msg)
    op = (m.group(1) if m else "").split("::")[-1].split(".")[0]
    base = op.strip("_").rstrip("0123456789").rstrip("_")
    bw = dx.failing_backward()
    roots = (bw.detail.roots or bw.input_ids()) if bw else []
    anc = dx.ancestors(roots, before=bw.index if bw else None) if roots else set()
    cand = []
    for key in (base, _ATEN_AS_CALLED.get(base, base), base.split("_")[0]):
        cand = [dx.ev[i] for i in sorted(anc) if key and key in _opname(dx.ev[i]).lower()]
        if cand:
            break
    e = cand[-1] if cand else None
    if e is None:
        return None
    return found(
        Cause.NONDIFFERENTIABLE_OP, e.site, dx.root_label(bw) if bw else "the loss", "no_derivative", op, e,
        evidence=[e])


@rule("failure", 85)
def anomaly_nonfinite(dx, q):
    """Anomaly detection stopped the backward: a node returned NaN. The forward op whose backward first sent an
    inf/nan gradient is the line (sqrt, log, acos, pow, a division, a norm at the edge of its domain; a softmax
    over a row masked entirely with -inf); the node the message names may be one step further (0 * inf)."""
    m = re.search(r"Function '(\w+)' returned nan values in its (\d+)th output", q.msg)
    if m is None:
        return None
    bw = dx.failing_backward()
    rec = dx.backward_record(bw)
    node, e = dx.nonfinite_source(rec, m.group(1))
    root = dx.root_label(bw) if bw else None
    entry = dx.nonfinite_entry(rec, e or dx.enclosing_event(rec, node)) if rec is not None else None
    if entry is not None and (e is None or entry.index != e.index):  # where the inf/nan appeared in the forward
        value = next((rec.values[t] for t in entry.output_ids() if rec.values.get(t) in ("nan", "inf")), "nan")
        return found(Cause.NONFINITE_GRADIENT, entry.site, root, "anomaly_nonfinite.entered", root, m.group(1),
                     entry, _opname(entry), bool(entry.detail.nonfinite_fill), value,
                     evidence=[entry] + ([e] if e is not None else []))
    if e is None:
        return None
    return found(Cause.NONFINITE_GRADIENT, e.site, root, "anomaly_nonfinite",
                 root, m.group(1), node, _opname(e), e, evidence=[e])


@rule("failure", 90)
def grad_input_unused(dx, q):
    """autograd.grad(outputs, inputs): an input "was not used in the graph". What cut it from the outputs
    (a NumPy round trip, a re-wrap, a detach) is the cause, found on the data path like any cut."""
    e = dx.error_event()
    bw = e if e is not None and e.kind == "backward" else dx.failing_backward()
    for tid in (bw.detail.inputs or ()) if bw is not None else ():
        if tid not in dx.d.tensors:
            continue
        name = dx.label(tid)
        res = dx.find_data_cut(tid, name, [bw])
        if res is not None:  # (worded as the cut, after saying which input of autograd.grad it cut)
            return Finding(res.cause, res.site, name, "grad_input_unused.cut", {"name": name, "cut": res},
                           res.path, res.evidence, res.extra_sites)
    return found(
        Cause.UNUSED_PARAMETER, e.site if e else dx.d.exception.site, "backward", "grad_input_unused",
        evidence=[e] if e else [])


@rule("failure", 100)
def reduction_unused(dx, q):
    """DistributedDataParallel's "Expected to have finished reduction ..." error: some parameters did not
    receive a gradient in the previous iteration. Named from the trace (what the last complete backward
    delivered), each group explained like any starved parameter (by module path, with its line)."""
    done = [b for b in dx.d.backwards if b.error is None]
    last = done[-1] if done else None
    params = [t for t in dx.d.tensors.values() if t.role == "param" and t.requires_grad
              and (not dx.trainable or t.tid in dx.trainable)]
    missing = [t for t in params if last is not None and t.tid not in last.arrived]
    e = dx.error_event()
    if not missing:
        return None
    sub = dx.why_finding(missing[0].tid)
    names = [dx.label(t.tid) for t in missing]
    site = sub.site or (e.site if e else None) or dx.d.exception.site
    return found(
        Cause.UNUSED_PARAMETER, site, names[0], "reduction_unused", names, e, sub,
        path=sub.path, evidence=([e] if e else []) + list(sub.evidence)[:1])
