"""Rules for a backward that raised (status `failure`), one per kind of PyTorch error; the message
patterns that select them are the table in :mod:`.errors`."""
from __future__ import annotations

# <imports>
import re

from ..explanation import Explanation, PathStep
from .common import _EXPLICIT_CUTS, _NOT_FORWARD, _opname, _sgd_rebind
from .registry import rule
from .wording import _at, _code, _out_of_place, _plain
# </imports>


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
    bw = dx._failing_backward()
    limit = bw.index if bw else len(dx.ev)
    # one candidate per written tensor: (event, target, base, version before, saved, saved_by)
    cands = []
    for e in dx.ev[:limit]:
        if not (e.kind == "inplace" or (e.kind == "cut" and e.cut == "data_set")):
            continue
        d = e.detail
        if d.get("targets") and d.get("versions_before"):  # optimizer.step(): every parameter it wrote
            saved = set(d.get("saved") or ())
            by = d.get("saved_by") or {}
            for t, vb in zip(d["targets"], d["versions_before"]):
                cands.append((e, t, None, vb, t in saved, by.get(t, by.get(str(t)))))
        else:
            cands.append((e, d.get("target"), d.get("base"), d.get("version_before"), bool(d.get("saved")),
                          d.get("saved_by")))

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
        return Explanation(
            "inplace_saved_tensor", bw.site if bw else None, "backward",
            "backward failed: a tensor saved for backward was modified in place, but the trace did not see the write "
            "(it may have happened through .data, NumPy, or outside the traced block).",
            detail=msg.splitlines()[0], fix="look for in-place writes (+=, x[...] =, add_, relu_(inplace=True)) on "
            "tensors used earlier in the forward.", evidence=[bw] if bw else [])
    e, tgt, base, _, _, saver = best[1]
    se = dx.ev[saver] if isinstance(saver, int) and 0 <= saver < len(dx.ev) else None
    tname = dx.label(tgt) if tgt is not None else "a tensor"
    what = f"`{tname}`"
    if tgt is not None and base is not None and tname == f"t{tgt}" and dx.label(base) != f"t{base}":
        tname = dx.label(base)  # an unnamed view (w[i], w[:, k]) of a named tensor: name the tensor
        what = f"a view of `{tname}`"
    op = _opname(e) if e.op else "in-place write"
    if op == "__setitem__":
        op = "slice assignment"
    if e.context == "optimizer" and e.op.endswith(".step"):
        op = e.op.split(".")[0] + ".step()"
    saved_txt = f"; {_opname(se)}{_at(se.site)} saved it for backward" if se is not None else (
        f" (saved by {node})" if node else "")
    who = " (inside optimizer.step())" if e.context == "optimizer" and not op.endswith(".step()") else ""
    return Explanation(
        "inplace_saved_tensor", e.site, tname,
        f"backward failed: {op}{who}{_at(e.site)}{_code(e.site)} modified {what} in place after it was saved "
        f"for backward{saved_txt}.",
        detail=("Autograd saves some inputs/outputs of an operation to compute its gradient; writing into them "
                "afterwards (+=, x[...] = v, add_, relu(inplace=True), optimizer.step()) makes the saved value wrong, "
                "so backward refuses to run."),
        fix=(("a graph kept alive across steps (retain_graph=True, e.g. on a hidden state carried into the next "
              "batch) still holds the weights that optimizer.step() changed: detach the carried state every step "
              "(`<state> = <state>.detach()`) and drop retain_graph=True."
              if e.context == "optimizer" and any(b.kind == "backward" and b.detail.get("retain_graph")
                                                  and b.index < e.index for b in dx.ev) else
              _out_of_place(e.site.code if e.site else "") or
              (f"write `{_plain(e.site)}` out of place (a new tensor instead of writing into one autograd "
               f"saved; inplace=False for activations)" + (", or run backward for every loss before "
                                                           "optimizer.step() changes the weights"
                                                           if e.context == "optimizer" else "") + "."))),
        path=[PathStep(_opname(se), se.op, se.site, note="saved for backward")] if se else [],
        evidence=[e] + ([se] if se else []))


@rule("failure", 20)
def no_grad_fn(dx, q):
    """backward() on a result with no history: the cut (no_grad, detach, a frozen model) that removed it."""
    bw = dx._failing_backward()
    roots = (bw.detail.get("roots") or bw.input_ids()) if bw else []
    root = dx._root_label(bw) if bw is not None and roots else "the loss"
    anc = dx.ancestors(roots, before=bw.index if bw else None) if roots else set()
    evs = [dx.ev[i] for i in sorted(anc)]
    tids = {r.tid for e in evs for r in e.inputs}
    ag = [e for e in evs if e.kind == "backward" and e.op == "torch.autograd.grad" and not e.detail.get("create_graph")]
    if ag:
        e = ag[-1]
        return Explanation(
            "autograd_grad_not_backward", e.site, root,
            f"backward on `{root}` failed: it is built from gradients returned by torch.autograd.grad"
            f"{_at(e.site)}{_code(e.site)} without create_graph=True, so they carry no graph to differentiate.",
            detail="autograd.grad returns plain tensors unless create_graph=True records the backward pass itself.",
            fix="pass create_graph=True to torch.autograd.grad when the gradients are used in a loss (gradient "
                "penalties, meta-learning).", evidence=[e])
    frozen = [e for e in dx.ev if e.kind == "requires_grad" and e.detail.get("value") is False
              and set(e.input_ids()) & tids and (bw is None or e.index < bw.index)]
    # a cut of a parameter that still requires grad (the student run inside the teacher's no_grad block)
    # explains it better than a freeze that was meant (the teacher's)
    # (not what torch did on the user's behalf: module.to() sets each parameter's .data)
    param_cut = any(e.kind == "cut" and e.context not in _NOT_FORWARD and any(
        r.requires_grad and r.is_leaf and dx.d.tensors.get(r.tid) is not None
        and dx.d.tensors[r.tid].role == "param" for r in e.inputs) for e in evs)
    if frozen and not param_cut:
        e = frozen[-1]
        names = sorted({dx.label(t) for f in frozen for t in f.input_ids() if t in tids})
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        whole = dx._froze_everything(e)
        return Explanation(
            "frozen_param", e.site, root,
            f"backward on `{root}` failed: nothing in it requires grad because {shown} "
            f"{'was' if len(names) == 1 else 'were'} frozen{_at(e.site)}{_code(e.site)} and never unfrozen."
            + (f" {whole[0]}" if whole else ""),
            detail="With every parameter frozen (requires_grad=False) and the other inputs detached, the loss has no "
                   "grad_fn, so backward has nothing to differentiate.",
            fix=whole[1] if whole and whole[1] else
                f"set requires_grad_(True) again on {shown} before the step that trains them (after the step "
                f"that needed them frozen).", evidence=frozen[-3:])
    cuts = [e for e in evs if e.kind == "cut" and e.cut != "zero_grad_op" and e.context not in _NOT_FORWARD
            and any(r.requires_grad for r in e.inputs)]
    if cuts:
        e = cuts[-1]
        k = evs.index(e)
        cause, se = dx._cause_of_cut(e, evs, k)
        rebind = _sgd_rebind(se.site) if cause == "no_grad_block" else None
        site = dx._region_site(se) if cause in ("no_grad_block", "inference_mode") and not rebind else se.site
        what = dx._cut_input_label(e, e.inputs[0].tid if e.inputs else None)
        fix = dx._cut_explanation(e.inputs[0].tid if e.inputs else 0, what, cause, se, e, [], None, root).fix
        same = [c for c in cuts if c.site is not None and e.site is not None and c.site.stack == e.site.stack
                and c.cut == e.cut and c.op == e.op and e.cut in _EXPLICIT_CUTS and c.module == e.module]
        if len(same) > 1:  # one line, many tensors: a loop or comprehension (every parameter detached)
            labels = [dx._cut_input_label(c, c.inputs[0].tid if c.inputs else None) for c in same]
            what = (f"every one of {len(same)} tensors on that line ({', '.join(labels[:3])}"
                    + (", …" if len(labels) > 3 else "") + ")")
            fix = (f"drop the {_opname(se)}() in that loop/comprehension for the tensors that should train "
                   f"(torch.func.functional_call and friends keep the graph through the tensors you pass); "
                   f"keep it only where no gradient is wanted.")
        off = dx._grad_off_elsewhere(se) if cause == "no_grad_block" else ""
        w = _sgd_rebind(site) if cause == "no_grad_block" else None
        if w:  # a manual SGD step that rebinds the leaf
            return Explanation(
                cause, site, root,
                f"backward on `{root}` failed: `{w}` was rebound{_at(site)}{_code(site)} to the result of "
                f"an update made under no_grad, a new tensor that does not require grad, so `{root}` computed "
                f"from it has no grad_fn.",
                detail="Under no_grad, `w = w - lr * w.grad` creates a new tensor without history and rebinds the "
                       "name; the original leaf that required grad is no longer used.",
                fix=fix, evidence=[e])
        return Explanation(
            cause, site, root,
            (f"backward on `{root}` failed: `{root}` does not require grad because {what} was computed while grad "
             f"was switched off{_at(site)}{_code(site)}; {off}." if off else
             f"backward on `{root}` failed: `{root}` does not require grad because {what} "
             f"{'were' if len(same) > 1 else 'was'} cut off from autograd"
             f"{_at(site)}{_code(site)} ({_opname(se)}), and nothing else in it requires grad."),
            detail="backward() needs a result with a grad_fn; every path from a trainable tensor to it was cut.",
            fix=fix, evidence=[e])
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
            cause, se = dx._cause_of_cut(e)
            rebind = _sgd_rebind(se.site) if cause == "no_grad_block" else None
            site = dx._region_site(se) if cause in ("no_grad_block", "inference_mode") and not rebind else se.site
            what = dx._cut_input_label(e, e.inputs[0].tid if e.inputs else None)
            return Explanation(
                cause, site, root,
                f"backward on `{root}` failed: `{root}` has no autograd history (it was built outside torch); the "
                f"last value that left autograd before it was {what}{_at(site)}{_code(site)}.",
                detail="backward() needs a result with a grad_fn; a tensor rebuilt from NumPy or Python numbers "
                       "has none.",
                fix=dx._cut_explanation(e.inputs[0].tid if e.inputs else 0, what, cause, se, e, [], None, root).fix,
                evidence=[e] + ([se] if se is not e else []))
    params = [t for t in tids if dx.d.tensors.get(t) and dx.d.tensors[t].role == "param"
              and not dx.d.tensors[t].requires_grad]
    if params:
        use = dx._first_use(params[0])
        return Explanation(
            "frozen_param", use.site if use else None, root,
            f"backward on `{root}` failed: its parameters ({', '.join(dx.label(p) for p in params[:3])}) have "
            f"requires_grad=False.",
            fix="unfreeze the parameters that should train.", evidence=[use] if use else [])
    site = bw.site if bw else None
    leaves = [t for t in tids if dx.d.tensors.get(t) and dx.d.tensors[t].producer is None]
    rg = [t for t in leaves if dx.d.tensors[t].requires_grad]
    if rg:  # trainable tensors went in, yet nothing recorded cut them off: say so, do not guess
        return Explanation(
            "unknown", site, root,
            f"backward on `{root}` failed: `{root}` does not require grad, although it was computed from "
            f"{', '.join(dx.label(t) for t in rg[:3])}, which do; the trace did not see where the connection "
            f"was cut.",
            detail="Something between them dropped the graph without a recorded call: code outside the traced "
                   "block, an extension op, or a value rebuilt from Python numbers.",
            fix=f"print `.requires_grad` / `.grad_fn` of the intermediate results between "
                f"{dx.label(rg[0])} and `{root}`; the first one without a grad_fn is the cut.",
            evidence=[bw] if bw else [])
    return Explanation(
        "requires_grad_false", site, root,
        f"backward on `{root}` failed: none of the tensors it was computed from requires grad"
        + (f" ({', '.join(dx.label(t) for t in leaves[:3])})" if leaves else "") + ".",
        fix="create the parameters with requires_grad=True (or use nn.Parameter).", evidence=[bw] if bw else [])


@rule("failure", 30)
def numpy_of_grad_tensor(dx, q):
    """.numpy() called on a tensor that requires grad."""
    e = dx._error_event()
    if e is None:
        for x in reversed(dx.ev):
            if x.kind == "cut" and x.cut == "numpy":
                e = x
                break
    what = dx._cut_input_label(e, e.inputs[0].tid) if e and e.inputs else "the tensor"
    return Explanation(
        "numpy_roundtrip", e.site if e else None, what,
        f"numpy() failed{_at(e.site if e else None)}{_code(e.site if e else None)}: `{what}` requires grad, and a "
        f"NumPy array cannot carry gradients.",
        detail="PyTorch refuses to convert a tensor that is part of the autograd graph, because the NumPy result "
               "would silently cut gradient flow.",
        fix=f"for logging/plotting: `{what}.detach().cpu().numpy()`; if the result feeds the loss, keep the "
            f"computation in torch instead.", evidence=[e] if e else [])


@rule("failure", 40)
def inference_tensor_saved(dx, q):
    """A tensor made under inference_mode used by an op that saves it for backward."""
    e = dx._error_event()
    src = None
    if e is not None:
        for r in e.inputs:
            p = dx.d.producer(r.tid)
            if p is not None and p.inference_mode:
                src = p
                break
    site = src.site if src else (e.site if e else None)
    return Explanation(
        "inference_mode", site, "the step",
        f"backward cannot use a tensor created under torch.inference_mode(){_at(site)}{_code(site)}: "
        f"{_opname(e) if e else 'an operation'}{_at(e.site if e else None)} tried to save it for backward.",
        detail="Inference tensors have no version counter and cannot be saved for backward.",
        fix="compute it outside torch.inference_mode() when it takes part in training (cloning it only hides "
            "the problem: the clone has no history).", evidence=[x for x in (src, e) if x])


@rule("failure", 50)
def backward_twice(dx, q):
    """A second backward through a graph whose buffers the first one freed."""
    bw = dx._failing_backward()
    earlier = [e for e in dx._backward_events() if bw is not None and e.index < bw.index]
    prev = earlier[-1] if earlier else None
    carried = None
    if bw is not None and prev is not None:
        prev_anc = dx.ancestors(prev.detail.get("roots") or prev.input_ids(), before=prev.index)
        cur_anc = dx.ancestors(bw.detail.get("roots") or bw.input_ids(), before=bw.index)
        for i in sorted(cur_anc):
            e = dx.ev[i]
            if i <= prev.index or e.context != "user":
                continue
            for r in e.inputs:
                p = dx.d.producer(r.tid)
                if r.requires_grad and not r.is_leaf and p is not None and p.index in prev_anc:
                    carried = (e, r.tid)
                    break
            if carried:
                break
    if carried is not None:
        e, t = carried
        name = dx.label(t)
        p = dx.d.producer(t)
        stepped = p is not None and any(x.kind == "optimizer_step" and p.index < x.index < bw.index for x in dx.ev)
        if p is not None and not stepped:
            # no optimizer step in between: several losses on one shared computation in the same step
            return Explanation(
                "backward_twice", p.site if p.site else e.site, name,
                f"backward{_at(bw.site)} failed: `{name}` (computed{_at(p.site)}) feeds more than one loss, and the "
                f"earlier backward{_at(prev.site)} already freed the graph behind it.",
                detail="Each backward frees the graph it ran through; a second loss built on the same shared "
                       "part cannot backpropagate through it again.",
                fix=dx._one_backward_fix(prev, bw),
                evidence=[e, prev, bw])
        return Explanation(
            "backward_twice", p.site if p is not None and p.site else e.site, name,
            f"backward{_at(bw.site)} failed: `{name}` was computed{_at(p.site if p else None)} before the earlier "
            f"backward{_at(prev.site)} and is used again{_at(e.site)}{_code(e.site)} without detach(), so the new "
            f"backward runs into the freed graph.",
            detail="After backward, autograd frees the saved tensors of the graph. A tensor carried into the next "
                   "step (an RNN hidden state, a running statistic) still points into that freed graph.",
            fix=f"detach the carried state before reusing it (`{name} = {name}.detach()`), or pass "
                f"retain_graph=True to the earlier backward if you really need gradients through both.",
            evidence=[e, prev, bw])
    return Explanation(
        "backward_twice", bw.site if bw else None, "backward",
        f"backward{_at(bw.site if bw else None)} ran through a graph that an earlier backward"
        f"{_at(prev.site if prev else None)} already freed.",
        detail="After backward, autograd frees the saved tensors of the graph. Running backward again through any "
               "part of it fails, e.g. when a hidden state is carried across steps without detach().",
        fix="detach state carried between steps (`<state> = <state>.detach()`), recompute the forward, or pass "
            "retain_graph=True to the first backward if you really need two.",
        evidence=[x for x in (bw, prev) if x])


@rule("failure", 60)
def once_differentiable(dx, q):
    """A second differentiation (create_graph=True: gradient penalty, double backward) through a custom
    Function whose backward is decorated with @once_differentiable."""
    node = dx._custom_node()
    if node is None:
        return None
    f = node.custom_backward
    site = dx._frame_site(f)
    fn = node.name.replace("Backward", "")
    cg = [e for e in dx._backward_events() if e.detail.get("create_graph")]
    where = f" (create_graph=True{_at(cg[-1].site)}{_code(cg[-1].site)})" if cg and cg[-1].site else ""
    return Explanation(
        "custom_function", site, fn,
        f"backward failed: {fn}.backward{_at(site)} is decorated with @once_differentiable, but the step "
        f"differentiates through it a second time{where}.",
        detail="@once_differentiable runs backward without recording a graph, so its result cannot be "
               "differentiated again (gradient penalties, double backward, meta-learning).",
        fix=f"remove @once_differentiable and write {fn}.backward with differentiable torch operations, or keep "
            f"this Function out of the part that is differentiated twice.", evidence=cg[-1:])


@rule("failure", 70)
def custom_function_gradients(dx, q):
    """A custom autograd.Function's backward returned the wrong number or shape of gradients."""
    msg = q.msg
    m = re.search(r"[Ff]unction (\w+) returned", msg)
    bw = dx._failing_backward()
    node = dx._custom_node(m.group(1) if m else None)
    if node is None:
        return None
    f = node.custom_backward
    site = dx._frame_site(f)
    first = msg.splitlines()[0]
    return Explanation(
        "custom_function", site, node.name.replace("Backward", ""),
        f"backward failed in the custom autograd.Function {node.name.replace('Backward', '')}: its backward "
        f"returns{_at(site)}{_code(site)} gradients that do not match its forward inputs ({first}).",
        detail="backward() must return exactly one gradient (or None) per input of forward(), each with the shape "
               "of that input.",
        fix="return one value per forward input, in order, with matching shapes (None for inputs that need no "
            "gradient).", evidence=[bw] if bw else [])


@rule("failure", 80)
def no_derivative(dx, q):
    """An op PyTorch has no derivative for, on the way to the loss."""
    msg = q.msg
    m = re.search(r"derivative for '([\w\.:]+)' is not implemented", msg)
    op = (m.group(1) if m else "").split("::")[-1].split(".")[0]
    base = op.strip("_").rstrip("0123456789").rstrip("_")
    bw = dx._failing_backward()
    roots = (bw.detail.get("roots") or bw.input_ids()) if bw else []
    anc = dx.ancestors(roots, before=bw.index if bw else None) if roots else set()
    cand = []
    for key in (base, base.split("_")[0]):
        cand = [dx.ev[i] for i in sorted(anc) if key and key in _opname(dx.ev[i]).lower()]
        if cand:
            break
    e = cand[-1] if cand else None
    if e is None:
        return None
    return Explanation(
        "nondifferentiable_op", e.site, dx._root_label(bw) if bw else "the loss",
        f"backward failed: {_opname(e)}(){_at(e.site)}{_code(e.site)} has no derivative in PyTorch ('{op}').",
        detail="Some operations (unique, sort indices, bucketize, ...) have no gradient formula; backward "
               "cannot pass through them.",
        fix="keep this operation out of the path to the loss (compute it on a detached copy), or use a "
            "differentiable surrogate.", evidence=[e])


@rule("failure", 90)
def grad_input_unused(dx, q):
    """autograd.grad(outputs, inputs): an input "was not used in the graph". What cut it from the outputs
    (a NumPy round trip, a re-wrap, a detach) is the cause, found on the data path like any cut."""
    e = dx._error_event()
    bw = e if e is not None and e.kind == "backward" else dx._failing_backward()
    for tid in (bw.detail.get("inputs") or ()) if bw is not None else ():
        if tid not in dx.d.tensors:
            continue
        name = dx.label(tid)
        res = dx._data_cut(tid, name, [bw])
        if res is not None:
            head = f"{name}.grad is None: "
            body = res.summary[len(head):] if res.summary.startswith(head) else res.summary
            res.summary = (f"torch.autograd.grad failed: the input `{name}` was not used to compute the outputs "
                           f"with history: {body}")
            res.target = name
            return res
    return Explanation("unused_parameter", e.site if e else dx.d.exception.site, "backward",
                       "torch.autograd.grad failed: one of the inputs was not used to compute the outputs.",
                       fix="pass allow_unused=True, or remove that input.", evidence=[e] if e else [])


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
    e = dx._error_event()
    if not missing:
        return None
    sub = dx.why(missing[0].tid)
    names = [dx.label(t.tid) for t in missing]
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    reason = sub.summary.split(": ", 1)[1] if ": " in sub.summary else sub.summary
    site = sub.site or (e.site if e else None) or dx.d.exception.site
    return Explanation(
        "unused_parameter", site, names[0],
        f"DistributedDataParallel stopped{_at(e.site if e else None)}: {len(names)} parameter(s) did not receive "
        f"a gradient in the previous iteration: {shown}; {reason}",
        detail="DDP waits for a gradient for every parameter it holds; a parameter the forward did not use "
               "never gets one, so the reduction of the previous iteration never finished.",
        fix=(sub.fix.rstrip(".") + "; if skipping it is intended, pass find_unused_parameters=True to "
             "DistributedDataParallel (or set requires_grad=False on it)."),
        path=sub.path, evidence=([e] if e else []) + list(sub.evidence)[:1])
