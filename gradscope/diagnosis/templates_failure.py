"""Templates of the failure rules (rules_failure.py): the summary, detail and fix of each backward error's
explanation, filled from the user's own code and names; the decisions stay in the rules."""
from __future__ import annotations

from .common import _opname
from .templates_shared import nonfinite_entered, nonfinite_reason_fix
from .wording import (
    _at, _code, _out_of_place, _plain, assign_target, composed, froze_everything_text, grad_off_text, one_backward_fix,
    said, trace_id, word, words,
)


@words("no_grad_fn.autograd_grad")
def no_grad_fn_autograd_grad_text(root, e):
    """no_grad_fn (autograd_grad_not_backward): summary, detail, fix."""
    summary = said(f"backward on `{root}` failed", f"it is built from gradients returned by torch.autograd.grad"
                   f"{_at(e.site)}{_code(e.site)} without create_graph=True, so they carry no graph to differentiate.")
    detail = ("autograd.grad returns plain tensors unless create_graph=True records the backward pass itself.")
    fix = ("pass create_graph=True to torch.autograd.grad when the gradients are used in a loss (gradient "
           "penalties, meta-learning).")
    return summary, detail, fix


@words("backward_twice")
def backward_twice_text(bw, prev):
    """backward_twice (backward_twice): summary, detail, fix."""
    summary = said(f"backward{_at(bw.site if bw else None)} ran through a graph that an earlier backward"
                   f"{_at(prev.site if prev else None)} already freed.")
    detail = ("After backward, autograd frees the saved tensors of the graph. Running backward again through any "
              "part of it fails, e.g. when a hidden state is carried across steps without detach().")
    fix = ("detach state carried between steps (`<state> = <state>.detach()`), recompute the forward, or pass "
           "retain_graph=True to the first backward if you really need two.")
    return summary, detail, fix


def _subject(name: str) -> str:
    """`name`, or "a tensor" when only the trace has a name for it (its id: `t14`)."""
    return "a tensor" if trace_id(name) else f"`{name}`"


@words("backward_twice.carried")
def backward_twice_carried_text(name, bw, p, prev, e):
    """backward_twice (backward_twice): summary, detail, fix."""
    summary = said(f"backward{_at(bw.site)} failed",
                   f"{_subject(name)} was computed{_at(p.site if p else None)} before the earlier "
                   f"backward{_at(prev.site)} and is used again{_at(e.site)}{_code(e.site)} without detach(), so the new "
                   f"backward runs into the freed graph.")
    detail = ("After backward, autograd frees the saved tensors of the graph. A tensor carried into the next "
              "step (an RNN hidden state, a running statistic) still points into that freed graph.")
    state = assign_target(name)
    fix = (f"detach the carried state before reusing it (`{state} = {state}.detach()`), or pass "
           f"retain_graph=True to the earlier backward if you really need gradients through both.")
    if e.op.endswith(".clone"):  # the repackaging that was meant to cut it
        fix = (f"use `{name}.detach()` instead of `{name}.clone()` there: clone() copies the values but keeps their "
               f"history (`{name}.detach().clone()` if you need a copy).")
    return summary, detail, fix


@words("backward_twice.precomputed")
def backward_twice_precomputed_text(name, bw, made, prev, e):
    """backward_twice (backward_twice): ``made`` the line that computed it (seen from the call that ran once)."""
    summary = said(f"backward{_at(bw.site)} failed",
                   f"{_subject(name)} was computed once{_at(made)}{_code(made)}, before the earlier "
                   f"backward{_at(prev.site)}, and every step uses it again{_at(e.site)}: the first backward freed "
                   f"the graph behind it, so the new backward runs into it.")
    detail = ("A value computed once from parameters (in __init__, or before the loop) carries a graph that only "
              "one backward can use; each step needs its own.")
    fix = (f"compute `{name}` in forward (every step) from the parameters instead of once; if it should be a constant, "
           f"compute it under torch.no_grad() (or detach it) so no step backpropagates into it.")
    return summary, detail, fix


@words("backward_twice.shared")
def backward_twice_shared_text(name, bw, p, prev, roots):
    """backward_twice (backward_twice): summary, detail, fix."""
    summary = said(f"backward{_at(bw.site)} failed",
                   f"`{name}` (computed{_at(p.site)}) feeds more than one loss, and the "
                   f"earlier backward{_at(prev.site)} already freed the graph behind it.")
    detail = ("Each backward frees the graph it ran through; a second loss built on the same shared "
              "part cannot backpropagate through it again.")
    fix = (one_backward_fix(roots))
    return summary, detail, fix


@words("backward_twice.stored")
def backward_twice_stored_text(held, attr, bw, p, prev, e, store):
    """backward_twice (backward_twice): a state computed each step and kept in an attribute for the next one."""
    summary = said(f"backward{_at(bw.site)} failed",
                   f"`{held}`, computed{_at(p.site)}, is kept for the next step in `{attr}`{_at(store)} with its "
                   f"graph; the next step uses it{_at(e.site)}, so its backward runs into the graph the earlier "
                   f"backward{_at(prev.site)} freed.")
    detail = ("A state carried from step to step (an RNN's hidden state, a simulator's state) must be detached "
              "where it is kept: after backward the graph behind it is freed.")
    fix = f"keep it detached there: `{attr} = {held}.detach()` (for a tuple of states, detach each)."
    return summary, detail, fix


@words("backward_twice.kept")
def backward_twice_kept_text(name, kept, bw, p, prev, e):
    """backward_twice (backward_twice): the step's graph kept in state (a queue, a memory bank) after the loss."""
    summary = said(f"backward{_at(bw.site)} failed",
                   f"`{name}` keeps `{kept}` with its graph{_at(p.site)}{_code(p.site)}; the next step uses it"
                   f"{_at(e.site)}, so its backward runs into the graph the earlier backward{_at(prev.site)} freed.")
    detail = ("A tensor stored for later steps (a queue of keys, a memory bank, a running buffer) must not carry "
              "the step's graph: after backward that graph is freed.")
    fix = f"store `{kept}.detach()` there (or build `{name}` under torch.no_grad())."
    return summary, detail, fix


@words("backward_twice.unwanted")
def backward_twice_unwanted_text(name, bw, p, prev, use, earlier):
    """backward_twice (backward_twice): one of two losses reaches the shared part only to go on into parameters its
    optimizer does not hold (a discriminator's loss into the generator); ``earlier``: that loss is the first one."""
    if earlier:
        said_use = (f"the earlier loss (backward{_at(prev.site)}) takes `{name}` in{_at(use.site)}{_code(use.site)} "
                    f"without detach(), so that backward went on into what made `{name}` (computed{_at(p.site)}) and "
                    f"freed its graph, which this loss needs; the optimizer stepped after it does not hold those "
                    f"parameters.")
    else:
        said_use = (f"its loss takes `{name}` in{_at(use.site)}{_code(use.site)} without detach(), so it "
                    f"backpropagates into what made `{name}` (computed{_at(p.site)}), whose graph the earlier "
                    f"backward{_at(prev.site)} already freed; the optimizer cleared for this backward does not hold "
                    f"those parameters.")
    summary = said(f"backward{_at(bw.site)} failed", said_use)
    detail = ("Each backward frees the graph it ran through. A loss that only trains the part after a tensor (a GAN's "
              "discriminator on the generator's output) should take that tensor detached.")
    fix = (f"use `{name}.detach()` there, so that loss stops at `{name}` (it needs no gradient behind it).")
    return summary, detail, fix


@words("backward_twice.first")
def backward_twice_first_text(name, bw, p, prev, roots):
    """backward_twice (backward_twice): two losses built on one shared part, one backward each; the first freed it."""
    summary = said(f"backward{_at(bw.site)} failed",
                   f"both losses run through `{name}` (computed{_at(p.site)}), and the earlier "
                   f"backward{_at(prev.site)}{_code(prev.site)} freed the graph behind it before the second "
                   f"backward ran.")
    detail = ("Each backward frees the graph it ran through unless retain_graph=True; a second loss built on the "
              "same shared part before that backward cannot backpropagate through it again.")
    fix = one_backward_fix(roots)
    return summary, detail, fix


@words("once_differentiable")
def once_differentiable_text(fn, cg, site):
    """once_differentiable (custom_function): ``cg``: the backward calls made with create_graph=True."""
    where = f" (create_graph=True{_at(cg[-1].site)}{_code(cg[-1].site)})" if cg and cg[-1].site else ""
    summary = said("backward failed", f"{fn}.backward{_at(site)} is decorated with @once_differentiable, but the step "
                   f"differentiates through it a second time{where}.")
    detail = ("@once_differentiable runs backward without recording a graph, so its result cannot be "
              "differentiated again (gradient penalties, double backward, meta-learning).")
    fix = (f"remove @once_differentiable and write {fn}.backward with differentiable torch operations, or keep "
           f"this Function out of the part that is differentiated twice.")
    return summary, detail, fix


@words("custom_function_gradients")
def custom_function_gradients_text(first, site, node):
    """custom_function_gradients (custom_function): summary, detail, fix."""
    summary = said(f"backward failed in the custom autograd.Function {node.name.replace('Backward', '')}",
                   f"its backward "
                   f"returns{_at(site)}{_code(site)} gradients that do not match its forward inputs ({first}).")
    detail = ("backward() must return exactly one gradient (or None) per input of forward(), each with the shape "
              "of that input.")
    fix = ("return one value per forward input, in order, with matching shapes (None for inputs that need no "
           "gradient).")
    return summary, detail, fix


@words("no_grad_fn.frozen")
def no_grad_fn_frozen_text(whole, root, site, names):
    """no_grad_fn (frozen_param): ``site`` the freeze (seen from the call that passed False)."""
    whole = froze_everything_text(whole)
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    summary = said(f"backward on `{root}` failed", f"nothing in it requires grad because {shown} "
                   f"{'was' if len(names) == 1 else 'were'} frozen{_at(site)}{_code(site)} and never unfrozen."
                   + (f" {whole[0]}" if whole else ""))
    detail = ("With every parameter frozen (requires_grad=False) and the other inputs detached, the loss has no "
              "grad_fn, so backward has nothing to differentiate.")
    fix = (whole[1] if whole and whole[1] else
           f"set requires_grad_(True) again on {shown} before the step that trains them (after the step "
           f"that needed them frozen).")
    return summary, detail, fix


@words("no_grad_fn.frozen_params")
def no_grad_fn_frozen_params_text(root, names):
    """no_grad_fn (frozen_param): summary, detail, fix."""
    summary = said(f"backward on `{root}` failed", f"its parameters ({', '.join(names[:3])}) have "
                   f"requires_grad=False.")
    detail = ""
    fix = ("unfreeze the parameters that should train.")
    return summary, detail, fix


@words("inference_tensor_saved")
def inference_tensor_saved_text(site, e):
    """inference_tensor_saved (inference_mode): summary, detail, fix."""
    summary = said(f"backward cannot use a tensor created under torch.inference_mode(){_at(site)}{_code(site)}",
                   f"{_opname(e) if e else 'an operation'}{_at(e.site if e else None)} tried to save it for backward.")
    detail = ("Inference tensors have no version counter and cannot be saved for backward.")
    fix = ("compute it outside torch.inference_mode() when it takes part in training (cloning it only hides "
           "the problem: the clone has no history).")
    return summary, detail, fix


def saved_tensor_name(tname):
    """The subject of an in-place failure: the written tensor's name, or a word for it when it has none."""
    return tname if tname is not None else "a tensor"


@words("inplace_modified_saved_tensor")
def inplace_modified_saved_tensor_text(e, tname, view, se, node, retained, alias=None):
    """inplace_modified_saved_tensor (inplace_saved_tensor): the write ``e`` modified ``tname`` (``view``: a view
    of it) after ``se`` (or the backward node ``node``) saved it; ``alias``: (source name, site) when ``tname`` was
    made by ``source.detach()`` there (it shares its memory). Summary, detail, fix."""
    what = f"a view of `{tname}`" if view else f"`{saved_tensor_name(tname)}`"
    op = _opname(e) if e.op else "in-place write"
    if op == "__setitem__":
        op = "slice assignment"
    if e.context == "optimizer" and e.op.endswith(".step"):
        op = e.op.split(".")[0] + ".step()"
    saved_txt = f"; {_opname(se)}{_at(se.site)} saved it for backward" if se is not None else (
        f" (saved by {node})" if node else "")
    who = " (inside optimizer.step())" if e.context == "optimizer" and not op.endswith(".step()") else ""
    summary = said("backward failed",
                   f"{op}{who}{_at(e.site)}{_code(e.site)} modified {what} in place after it was saved "
                   f"for backward{saved_txt}.")
    detail = ("Autograd saves some inputs/outputs of an operation to compute its gradient; writing into them "
              "afterwards (+=, x[...] = v, add_, relu(inplace=True), optimizer.step()) makes the saved value wrong, "
              "so backward refuses to run.")
    if alias is not None:
        src, site = alias
        summary += (f" `{tname}` is `{src}.detach()`{_at(site)}, which shares `{src}`'s memory: writing into "
                    f"`{tname}` wrote into `{src}`.")
        detail += (f" detach() gives a tensor without history but not a copy: it is the same memory (and version "
                   f"counter) as `{src}`.")
    fix = ("a graph kept alive across steps (retain_graph=True, e.g. on a hidden state carried into the next "
           "batch) still holds the weights that optimizer.step() changed: detach the carried state every step "
           "(`<state> = <state>.detach()`) and drop retain_graph=True."
           if e.context == "optimizer" and retained else
           (f"copy before writing: `{tname} = {alias[0]}.detach().clone()` "
            f"(its own memory), or " + (_out_of_place(e.site.code if e.site else "") or "write it out-of-place.")
            if alias is not None else None) or
           _out_of_place(e.site.code if e.site else "") or
           (f"write `{_plain(e.site)}` out of place (a new tensor instead of writing into one autograd "
            f"saved; inplace=False for activations)" + (", or run backward for every loss before "
                                                        "optimizer.step() changes the weights"
                                                        if e.context == "optimizer" else "") + "."))
    return summary, detail, fix


@words("inplace_modified_saved_tensor.unseen")
def inplace_modified_saved_tensor_unseen_text(msg):
    """inplace_modified_saved_tensor (inplace_saved_tensor): summary, detail, fix."""
    summary = said("backward failed",
                   "a tensor saved for backward was modified in place, but the trace did not see the write "
                   "(it may have happened through .data, NumPy, or outside the traced block).")
    detail = (msg.splitlines()[0])
    fix = ("look for in-place writes (+=, x[...] =, add_, relu_(inplace=True)) on "
           "tensors used earlier in the forward.")
    return summary, detail, fix


@words("no_derivative")
def no_derivative_text(op, e):
    """no_derivative (nondifferentiable_op): summary, detail, fix."""
    summary = said("backward failed",
                   f"{_opname(e)}(){_at(e.site)}{_code(e.site)} has no derivative in PyTorch ('{op}').")
    detail = ("Some operations (unique, sort indices, bucketize, ...) have no gradient formula; backward "
              "cannot pass through them.")
    fix = ("keep this operation out of the path to the loss (compute it on a detached copy), or use a "
           "differentiable surrogate.")
    return summary, detail, fix


@words("numpy_of_grad_tensor")
def numpy_of_grad_tensor_text(what, e):
    """numpy_of_grad_tensor (numpy_roundtrip): summary, detail, fix."""
    summary = said(f"numpy() failed{_at(e.site if e else None)}{_code(e.site if e else None)}",
                   f"`{what}` requires grad, and a "
                   f"NumPy array cannot carry gradients.")
    detail = ("PyTorch refuses to convert a tensor that is part of the autograd graph, because the NumPy result "
              "would silently cut gradient flow.")
    fix = (f"for logging/plotting: `{what}.detach().cpu().numpy()`; if the result feeds the loss, keep the "
           f"computation in torch instead.")
    return summary, detail, fix


@words("no_grad_fn")
def no_grad_fn_text(names, root):
    """no_grad_fn (requires_grad_false): summary, detail, fix."""
    summary = said(f"backward on `{root}` failed", "none of the tensors it was computed from requires grad"
                   + (f" ({', '.join(names[:3])})" if names else "") + ".")
    detail = ""
    fix = ("create the parameters with requires_grad=True (or use nn.Parameter).")
    return summary, detail, fix


@words("no_grad_fn.source")
def no_grad_fn_source_text(root, what, made):
    """no_grad_fn (requires_grad_false) at the creation of the one floating-point input: summary, detail, fix."""
    summary = said(f"backward on `{root}` failed", f"none of the tensors it was computed from requires grad; its only "
                   f"floating-point input, {what}, was created{_at(made.site)}{_code(made.site)} without "
                   f"requires_grad.")
    detail = "Nothing else it was computed from could carry a gradient (integer tensors and Python numbers cannot)."
    fix = (f"create {what} with requires_grad=True (`{made.op}(..., requires_grad=True)`), or make it an "
           f"nn.Parameter of the model if it is meant to be learned.")
    return summary, detail, fix


@words("no_grad_fn.custom_nested")
def no_grad_fn_custom_nested_text(root, cls, site):
    """no_grad_fn (custom_function): summary, detail, fix."""
    summary = said(f"backward on `{root}` failed", f"`{root}` has no grad_fn because {cls}{_at(site)}{_code(site)} "
                   f"made no graph: the tensor that needs grad reached its forward inside a tuple, list or dict "
                   f"argument, where autograd does not look.")
    detail = ("Function.apply connects only the tensors passed to it directly as arguments; a tensor inside a "
              "container is an ordinary Python object to it, so the output gets no grad_fn.")
    fix = (f"pass each tensor as its own argument, `{cls}.apply(<a>, <b>)`, with forward taking them one by one, "
           "and return one gradient per argument from backward.")
    return summary, detail, fix


@words("no_grad_fn.custom_marked")
def no_grad_fn_custom_marked_text(root, cls, site):
    """no_grad_fn (nondifferentiable_op): summary, detail, fix."""
    summary = said(f"backward on `{root}` failed", f"`{root}` has no grad_fn because the custom autograd.Function "
                   f"{cls} marks its output non-differentiable{_at(site)}{_code(site)}.")
    detail = "An output marked with ctx.mark_non_differentiable() never gets a grad_fn."
    fix = "do not mark outputs that should carry gradient with ctx.mark_non_differentiable()."
    return summary, detail, fix


@words("no_grad_fn.custom_forward")
def no_grad_fn_custom_forward_text(root, cls, site):
    """no_grad_fn (nondifferentiable_op): summary, detail, fix."""
    summary = said(f"backward on `{root}` failed", f"`{root}` has no grad_fn because the result of {cls}"
                   f"{_at(site)}{_code(site)} does not require grad although its input did: its forward ran without "
                   f"autograd recording it.")
    detail = "A custom Function's output gets a grad_fn only through Function.apply."
    fix = "call the Function through .apply(...), not .forward(...)."
    return summary, detail, fix


@words("no_grad_fn.unseen_cut")
def no_grad_fn_unseen_cut_text(root, names):
    """no_grad_fn (unknown): summary, detail, fix."""
    summary = said(f"backward on `{root}` failed", f"`{root}` does not require grad, although it was computed from "
                   f"{', '.join(names[:3])}, which do; the trace did not see where the connection "
                   f"was cut.")
    detail = ("Something between them dropped the graph without a recorded call: code outside the traced "
              "block, an extension op, or a value rebuilt from Python numbers.")
    fix = (f"print `.requires_grad` / `.grad_fn` of the intermediate results between "
           f"{names[0]} and `{root}`; the first one without a grad_fn is the cut.")
    return summary, detail, fix


@words("grad_input_unused")
def grad_input_unused_text():
    """grad_input_unused (unused_parameter): summary, detail, fix."""
    summary = said("torch.autograd.grad failed", "one of the inputs was not used to compute the outputs.")
    detail = ""
    fix = ("pass allow_unused=True, or remove that input.")
    return summary, detail, fix


@words("reduction_unused")
def reduction_unused_text(names, e, sub):
    """reduction_unused (unused_parameter): the parameters ``names`` got no gradient; ``sub``: why the first did not
    (its finding)."""
    sub_summary, _, sub_fix = composed(sub)
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    reason = sub_summary.quote()
    summary = said(f"DistributedDataParallel stopped{_at(e.site if e else None)}",
                   f"{len(names)} parameter(s) did not receive "
                   f"a gradient in the previous iteration: {shown}; {reason}")
    detail = ("DDP waits for a gradient for every parameter it holds; a parameter the forward did not use "
              "never gets one, so the reduction of the previous iteration never finished.")
    fix = (sub_fix.rstrip(".") + "; if skipping it is intended, pass find_unused_parameters=True to "
           "DistributedDataParallel (or set requires_grad=False on it).")
    return summary, detail, fix


def _cut_loop(what, se, labels, cut_fix):
    """(what, fix) of a cut on one line that ran for several tensors (``labels``: theirs; none: a single cut)."""
    if not labels:
        return what, cut_fix
    if len(set(labels)) == 1:  # one variable, each time a loop ran the line (a rollout's action)
        return f"{labels[0]} (each of the {len(labels)} times the line ran)", cut_fix
    return ((f"every one of {len(labels)} tensors on that line ({', '.join(labels[:3])}"
             + (", …" if len(labels) > 3 else "") + ")"),
            (f"drop the {_opname(se)}() in that loop/comprehension for the tensors that should train "
             f"(torch.func.functional_call and friends keep the graph through the tensors you pass); "
             f"keep it only where no gradient is wanted."))


@words("no_grad_fn.cut")
def no_grad_fn_cut_text(off, root, what, site, se, labels, cut):
    """no_grad_fn (cause): summary, detail, fix; ``off``: the switch of grad outside the cut's call chain (its
    grad_mode event), ``cut``: the cut's own finding (its fix)."""
    off, cut_fix = grad_off_text(off), word(cut)[2]
    what, fix = _cut_loop(what, se, labels, cut_fix)
    same = labels if len(set(labels)) > 1 else [what]
    summary = said(f"backward on `{root}` failed",
                   f"`{root}` does not require grad because {what} was computed while grad "
                   f"was switched off{_at(site)}{_code(site)}; {off}." if off else
                   f"`{root}` does not require grad because {what} "
                   f"{'were' if len(same) > 1 else 'was'} cut off from autograd"
                   f"{_at(site)}{_code(site)} ({_opname(se)}), and nothing else in it requires grad.")
    detail = ("backward() needs a result with a grad_fn; every path from a trainable tensor to it was cut.")
    fix = (fix)
    return summary, detail, fix


@words("no_grad_fn.rebind")
def no_grad_fn_rebind_text(root, w, site, se, labels, cut):
    """no_grad_fn (cause): summary, detail, fix; ``cut``: the cut's own finding (its fix)."""
    cut_fix = word(cut)[2]
    fix = _cut_loop("", se, labels, cut_fix)[1]
    summary = said(f"backward on `{root}` failed", f"`{w}` was rebound{_at(site)}{_code(site)} to the result of "
                   f"an update made under no_grad, a new tensor that does not require grad, so `{root}` computed "
                   f"from it has no grad_fn.")
    detail = ("Under no_grad, `w = w - lr * w.grad` creates a new tensor without history and rebinds the "
              "name; the original leaf that required grad is no longer used.")
    fix = (fix)
    return summary, detail, fix


@words("no_grad_fn.outside_torch")
def no_grad_fn_outside_torch_text(root, what, site, cut):
    """no_grad_fn (cause): summary, detail, fix."""
    summary = said(f"backward on `{root}` failed",
                   f"`{root}` has no autograd history (it was built outside torch); the "
                   f"last value that left autograd before it was {what}{_at(site)}{_code(site)}.")
    detail = ("backward() needs a result with a grad_fn; a tensor rebuilt from NumPy or Python numbers "
              "has none.")
    fix = word(cut)[2]
    return summary, detail, fix


@words("grad_input_unused.cut")
def grad_input_unused_cut_text(name, cut):
    """grad_input_unused (the cut's cause): the input ``name`` of autograd.grad was cut from the outputs; ``cut``:
    that cut's finding (its summary after the name, its detail and fix)."""
    summary, detail, fix = word(cut)
    body = summary.quote() if summary.of == name else summary
    return (said("torch.autograd.grad failed", f"the input `{name}` was not used to compute the outputs with history: "
                 f"{body}"), detail, fix)


@words("anomaly_nonfinite.entered")
def anomaly_nonfinite_entered_text(root, named, entry, op, filled, value):
    """anomaly_nonfinite (nonfinite_gradient): the forward call ``entry`` is where the inf/nan first appeared."""
    how, fix = nonfinite_entered(op, filled)
    summary = said(f"backward on `{root}` failed",
                   f"anomaly detection found NaN in {named}; the {value} entered the forward at "
                   f"{op.strip('_') or op}(){_at(entry.site)}{_code(entry.site)}, "
                   + ("which filled it in." if filled else "whose result holds it although its inputs do not."))
    detail = (f"{how[0].upper()}{how[1:]}. Backward carries it on: anomaly mode stops at the first node that "
              "returns NaN, which can be far from where the value appeared (gradscope read the step's values that "
              "were still alive when backward stopped).")
    return summary, detail, fix


@words("anomaly_nonfinite")
def anomaly_nonfinite_text(root, named, node, op, e):
    """anomaly_nonfinite (nonfinite_gradient): anomaly mode stopped backward at the node ``named`` (its NaN); ``node``
    (of the forward event ``e``, op ``op``) sent the first inf/nan gradient."""
    why, fix = nonfinite_reason_fix(op)
    where = f"the backward of {op.strip('_') or op}(){_at(e.site)}{_code(e.site)}"  # (`a ** p` runs __pow__)
    summary = said(f"backward on `{root}` failed",
                   f"anomaly detection found NaN in the gradient returned by {where}." if node.name == named else
                   f"anomaly detection found NaN in {named}; the first non-finite gradient came from {where} "
                   f"({node.name}).")
    detail = (f"{why[0].upper()}{why[1:]}. Anomaly mode stops at the first NaN a backward node returns; the forward "
              "line of the node that first sent inf or nan is the one to guard.")
    return summary, detail, fix
