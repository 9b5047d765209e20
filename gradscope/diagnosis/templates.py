"""Templates per cause: the summary, detail and fix of each rule's finding, filled from the user's own code and
names (the sites, the names, the code the rules found). Rules decide (cause, site, evidence); these say it.
No template names a model, a library or a value from a particular scenario (tests/test_rules.py scans them)."""
from __future__ import annotations

from .common import _opname, _receiver
from .templates_shared import (  # (importing it registers the shared findings' wording)
    _ok_norm, _ok_via, _Worded, nonfinite_entered, unfreeze_unreached_note, zero_op_text,
)
from .wording import (
    _at, _clear_call, _code, _code_of, _plain, composed, froze_everything_text, hook_fix, py_expr, said, words,
)




# --- autograd_grad_not_backward -----------------------------------------------------------------
@words("autograd_grad_only")
def autograd_grad_only_text(name, api, e, func_api):
    """autograd_grad_only (autograd_grad_not_backward): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"the step computed gradients with {api}{_at(e.site)}{_code(e.site)}, "
                   f"which returns them instead of storing them in .grad.", of=name)
    detail = (f"{api} never writes .grad; optimizer.step() then sees no gradients.")
    fix = ("assign the returned gradients before optimizer.step(): torch.func.grad returns them in the "
           "structure of its input, e.g. `for n, p in <module>.named_parameters(): p.grad = grads[n]`."
           if func_api else
           "use loss.backward() (then clip with torch.nn.utils.clip_grad_norm_), or assign the returned "
           "gradients: `for p, g in zip(params, grads): p.grad = g`.")
    return summary, detail, fix


@words("reached_only_by_autograd_grad")
def reached_only_by_autograd_grad_text(name, root, e, bw):
    """reached_only_by_autograd_grad (autograd_grad_not_backward): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"`{root}`, which it feeds, was differentiated only with torch.autograd.grad"
                   f"{_at(e.site)}{_code(e.site)}, which returns gradients instead of storing them in .grad; the "
                   f".backward(){_at(bw.site)} does not reach it.", of=name)
    detail = "torch.autograd.grad computes the gradients of its inputs only and writes no parameter's .grad."
    fix = (f"call `{root}.backward()` (it fills .grad of everything `{root}` depends on, its inputs' too when they "
           "require grad), or pass the parameters to torch.autograd.grad as inputs and assign what it returns to "
           "their .grad.")
    return summary, detail, fix


@words("cleared_then_autograd_grad")
def cleared_then_autograd_grad_text(name, e, clears):
    """cleared_then_autograd_grad (autograd_grad_not_backward): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"it was cleared{_at(clears[-1].site)}, then its next gradient was computed "
                   f"with torch.autograd.grad{_at(e.site)}{_code(e.site)}, which returns it instead of storing it "
                   f"in .grad.", of=name)
    detail = ("torch.autograd.grad(outputs, inputs) never writes .grad; optimizer.step() then sees no "
              "gradients.")
    fix = ("use loss.backward() for that pass, or assign the returned gradients: "
           "`for p, g in zip(params, grads): p.grad = g`.")
    return summary, detail, fix


# --- custom_function ----------------------------------------------------------------------------
@words("custom_function_zero")
def custom_function_zero_text(name, fn, site):
    """custom_function_zero (custom_function): summary, detail, fix."""
    summary = said(f"{name}.grad is all zeros", f"the custom autograd.Function {fn} returns a zero gradient"
                   f"{_at(site)}{_code(site)}, so nothing flows back to {name}.", of=name)
    detail = ("Everything before a custom Function gets only what its backward() returns.")
    fix = (f"implement the real derivative in {fn}.backward (check it with torch.autograd.gradcheck).")
    return summary, detail, fix


@words("backward_node_sent_none.custom")
def backward_node_sent_none_custom_text(name, j, direct, site, n):
    which = f"({name})" if direct else f"(the path to {name})"
    """backward_node_sent_none (custom_function): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"the custom autograd.Function {n.name.replace('Backward', '')} "
                   f"returns None as the gradient for input {j} {which} at {site.short}{_code(site)}.", of=name)
    detail = ("A custom Function's backward must return one gradient per forward input; "
              "None means 'no gradient' for that input.")
    fix = (f"compute and return the gradient with respect to {name} in backward() "
           f"(same shape as {name}).")
    return summary, detail, fix


# --- frozen_param -------------------------------------------------------------------------------
@words("frozen_in_trace")
def frozen_in_trace_text(name, unreached, whole, e, site=None):
    whole = froze_everything_text(whole)
    note = unfreeze_unreached_note(name, *unreached) if unreached else ""
    """frozen_in_trace (frozen_param): summary, detail, fix. ``site``: the user's line that froze it (the call of a
    framework's freeze(), whose own line is ``e.site``)."""
    where = f"{_at(e.site)}{_code(e.site)}"
    if site is not None and e.site is not None and (site.filename, site.lineno) != (e.site.filename, e.site.lineno):
        where = f"{_at(site)}{_code(site)}, inside {e.site.function}{_at(e.site)}{_code(e.site)}"
    summary = said(f"{name}.grad is None", f"{name} was frozen{where} (requires_grad=False), so "
                   f"autograd does not compute its gradient." + (f" {whole[0]}" if whole else "") + note, of=name)
    detail = ("A tensor with requires_grad=False is treated as a constant.")
    fix = (whole[1] if whole and whole[1] else
           f"set {py_expr(name)}.requires_grad_(True) again before the step that should train it, or fix the "
           f"condition that froze it.")
    if where != f"{_at(e.site)}{_code(e.site)}" and not (whole and whole[1]) and _plain(site):
        fix = (f"remove `{_plain(site)}` (line {site.lineno}) if {name} should learn, or set "
               f"{py_expr(name)}.requires_grad_(True) again before the step that should train it.")
    return summary, detail, fix


@words("created_frozen")
def created_frozen_text(name, unreached, site):
    note = unfreeze_unreached_note(name, *unreached) if unreached else ""
    """created_frozen (frozen_param): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"{name} was created with requires_grad=False{_at(site)}{_code(site)}, "
                   f"so autograd treats it as a constant.{note}", of=name)
    detail = ("nn.Parameter(..., requires_grad=False) and from_pretrained(..., freeze=True) create "
              "frozen parameters.")
    fix = (("pass freeze=False in `" + _plain(site) + "`" if "freeze=True" in _plain(site) else
            "create it with requires_grad=True") + f", or call "
           f"{py_expr(name)}.requires_grad_(True) before building the optimizer.")
    return summary, detail, fix


@words("frozen_before_trace")
def frozen_before_trace_text(name, unreached):
    note = unfreeze_unreached_note(name, *unreached) if unreached else ""
    """frozen_before_trace (frozen_param): summary, detail, fix."""
    summary = said(f"{name}.grad is None",
                   f"{name} has requires_grad=False (it was frozen before the trace started).{note}", of=name)
    detail = ("A parameter with requires_grad=False is treated as a constant.")
    fix = (f"call {py_expr(name)}.requires_grad_(True) where the model is set up, if it should train.")
    return summary, detail, fix


# --- set_to_none_timing ------------------------------------------------------------------------
@words("cleared_before_read")
def cleared_before_read_text(name, e, read, zeroed, shared):
    """cleared_before_read (set_to_none_timing): `.grad` cleared by ``e`` before ``read`` read it; ``zeroed``:
    zeros written (else set to None); ``shared``: how many optimizers hold it when one's zero_grad() clears the
    other's (0: not that case). Summary, detail, fix."""
    via = _clear_call(e)  # (the call as written)
    found = "zeros" if zeroed else "None"
    if read.kind == "optimizer_step":
        reader = (f"{_receiver(_code_of(read), '.step(') or read.op.split('.')[0]}.step(){_at(read.site)} read it "
                  f"and found {found}"
                  + ("" if zeroed else ", so it skipped the parameter"))
    elif read.context == "clip":
        reader = f"clipping{_at(read.site)}{_code(read.site)} read it and found {found}"
    else:
        reader = f"{_code(read.site).strip() or 'a read'}{_at(read.site)} read it and found {found}"
    if shared:
        return (said(f"{name}.grad is None", f"backward filled it, then {via}{_at(e.site)}{_code(e.site)} set it "
                     f"back to None, and {reader}: {name} is in the param_groups of {shared} optimizers, so "
                     f"this zero_grad() clears it too.", of=name),
                "Each optimizer's zero_grad() clears every parameter it holds; an optimizer built from "
                "model.parameters() holds the other model's parameters as well.",
                "give each optimizer only the parameters of the model it trains (build it from that "
                "model's .parameters(), not from a container that holds both).")
    what = "wrote zeros into it" if zeroed else "set it back to None"
    return (said(f"{name}.grad is {'all zeros' if zeroed else 'None'}", f"backward filled it, then {via}"
                 f"{_at(e.site)}{_code(e.site)} {what} before its consumer: {reader}.", of=name),
            ("zero_grad() (set_to_none=False) writes zeros into the existing .grad tensors" if zeroed else
             "zero_grad() sets gradients to None by default (set_to_none=True)")
            + "; anything that reads them after it and before the next backward (clipping, logging, "
              "optimizer.step()) sees no gradient.",
            f"move {via} after the last read of the gradients (after optimizer.step()) or to the start of the "
            f"step, before backward.")


@words("hook_replaced_gradient")
def hook_replaced_gradient_text(name, h, site, arrived, late):
    """hook_replaced_gradient (hook_modified): the hook ``h`` (its body at ``site``) replaced or zeroed a non-zero
    gradient (norm ``arrived``; -1: sent, not measured). Summary, detail, fix."""
    post = bool(h.detail.post_accumulate)
    return (said(f"{name}.grad is all zeros", "backward delivered a non-zero gradient"
                 f"{f' (norm {arrived:.3g})' if arrived > 0 else ''}, but the "
                 f"{'post-accumulate-grad ' if post else ''}hook {(h.detail.hook or '')} registered"
                 f"{' before the trace' if h.detail.before_trace else _at(h.site)} "
                 f"{'zeroed .grad' if post else 'replaced it'}{_at(site)}{_code(site)}.", of=name),
            ("A post-accumulate-grad hook runs after the gradient is stored in .grad and can change it in "
             "place (pruning masks, optimizer-in-backward)." if post else
             "Tensor hooks run before the gradient is accumulated into .grad; what the hook returns "
             "replaces the gradient."),
            hook_fix(late, f"check what the hook multiplies or overwrites .grad with in `{_plain(site)}` "
                            f"(it is all zero here)." if post else
                         f"check the hook's arithmetic in `{_plain(site)}` (it returns zero here); return None "
                         f"from the hook to leave the gradient unchanged."))


# --- hook_modified ------------------------------------------------------------------------------
@words("module_backward_hook_zero")
def module_backward_hook_zero_text(name, path, site):
    """module_backward_hook_zero (hook_modified): summary, detail, fix."""
    summary = said(f"{name}.grad is all zeros", f"the backward hook on module `{path or 'the model'}` returns a zero "
                   f"gradient{_at(site)}{_code(site)}, so nothing flows back to {name}.", of=name)
    detail = ("What a module backward hook (register_full_backward_hook) returns replaces the "
              "gradient with respect to the module's inputs.")
    fix = ("return None from the hook to keep the gradient, or fix the scaling it applies.")
    return summary, detail, fix


@words("tensor_hook_zero")
def tensor_hook_zero_text(name, tn, site, h, late):
    """tensor_hook_zero (hook_modified): summary, detail, fix."""
    summary = said(f"{name}.grad is all zeros", f"the hook on `{tn}` registered{_at(h.site)} returns a zero gradient"
                   f"{_at(site)}{_code(site)}, so nothing flows back to {name}.", of=name)
    detail = ("A tensor hook's return value replaces the gradient flowing through that tensor.")
    fix = (hook_fix(late, f"check what the hook returns (`{_plain(site)}` is zero here); "
           f"return None from the hook to leave the gradient unchanged."))
    return summary, detail, fix


@words("forward_hook_replaced_output")
def forward_hook_replaced_output_text(name, dead, site):
    """forward_hook_replaced_output (hook_modified): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"a forward hook on `{dead.op}` returns a value{_at(site)}{_code(site)}, "
                   f"which replaces the module's output, so what {name} computed never reaches the loss.", of=name)
    detail = ("A forward hook (register_forward_hook) that returns something other than None replaces "
              "the module's output with it.")
    fix = ("return None from a hook that only looks at (or collects) the output; return a modified "
           "output only on purpose.")
    return summary, detail, fix


# --- leaf_replaced_by_to ------------------------------------------------------------------------
@words("to_copy_is_not_a_leaf")
def to_copy_is_not_a_leaf_text(name, site, prod):
    """to_copy_is_not_a_leaf (leaf_replaced_by_to): summary, detail, fix."""
    summary = said(f"{name}.grad is None",
                   f"`{name}` was rebound{_at(site)}{_code(site)} to a .{_opname(prod)}() copy, "
                   f"which is not a leaf; the gradient went to the original tensor.", of=name)
    detail = ("Only leaf tensors get .grad. A .to()/.double()/.float() result is a new, non-leaf tensor "
              "that autograd passes the gradient through.")
    fix = (f"create the tensor with the dtype/device you need directly (pass dtype=/device= and "
           f"requires_grad=True where it is made) instead of `{_plain(site)}`, or keep a name for the "
           f"original leaf and read its .grad.")
    return summary, detail, fix

# --- no_backward --------------------------------------------------------------------------------
@words("no_backward")
def no_backward_text(name):
    """no_backward (no_backward): summary, detail, fix."""
    summary = said(f"{name}.grad is None", "no backward ran inside the trace.", of=name)
    detail = ("Gradients are only computed by loss.backward() (or torch.autograd.backward).")
    fix = ("call loss.backward() inside the traced block.")
    return summary, detail, fix

# --- no_grad_block ------------------------------------------------------------------------------
@words("manual_update_rebind")
def manual_update_rebind_text(name, w, site):
    """manual_update_rebind (no_grad_block): summary, detail, fix."""
    summary = said(f"{name}.grad is None",
                   f"`{w}` was rebound{_at(site)}{_code(site)} to the result of a manual update "
                   f"made under no_grad, a new tensor that does not require grad; the leaf that trained is no longer "
                   f"the one `{w}` names.", of=name)
    detail = ("Under no_grad an out-of-place update creates a new tensor without history and rebinds the "
              "name; the original leaf keeps its gradient but is not updated.")
    fix = (f"update it in place under no_grad so it stays the leaf that requires grad: `{w} -= lr * "
           f"{w}.grad`, then `{w}.grad = None` (or use a torch.optim optimizer).")
    return summary, detail, fix

# --- non_leaf_no_retain_grad --------------------------------------------------------------------
@words("retain_grad_after_backward")
def retain_grad_after_backward_text(name, site, rg):
    """retain_grad_after_backward (non_leaf_no_retain_grad): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"`{name}` is not a leaf (computed{_at(site)}{_code(site)}) and "
                   f"retain_grad() was called only after backward{_at(rg[0].site)}, which is too late.", of=name)
    detail = ("retain_grad() asks autograd to keep the gradient in later backward passes; it cannot "
              "recover one that already ran.")
    fix = (f"call `{name}.retain_grad()` right after `{name}` is computed, before loss.backward().")
    return summary, detail, fix


@words("non_leaf")
def non_leaf_text(name, site, computed):
    """non_leaf (non_leaf_no_retain_grad): ``computed``: the Parameter(...) call and the arithmetic after it when the
    non-leaf is a temporary Parameter times a value (``"(...)"`` parts of the line; None: a plain non-leaf).
    Summary, detail, fix."""
    fix = (f"call `{name}.retain_grad()` right after it is created (before backward), or use "
           f"torch.autograd.grad(loss, {name}).")
    if computed is not None:
        inside = f"`{computed[0]}({computed[1]} {computed[2]} {computed[3]})`" if computed else "the Parameter(...) call"
        fix = (f"apply the arithmetic inside the Parameter: {inside}; as written, `{name}` is a computed "
               f"tensor that the module does not register and the optimizer never sees (retain_grad() would "
               f"show a .grad, but it would still never train).")
    summary = said(f"{name}.grad is None",
                   f"`{name}` is not a leaf (it was computed{_at(site)}{_code(site)}), and PyTorch "
                   f"only fills .grad of leaves unless retain_grad() is called.", of=name)
    detail = ("Gradient flows through non-leaf tensors but is not stored on them by default.")
    return summary, detail, fix


# --- nonfinite_gradient -------------------------------------------------------------------------
@words("first_nonfinite_node.entered")
def first_nonfinite_node_entered_text(name, entry, op, filled, value, node):
    """first_nonfinite_node (nonfinite_gradient): the forward call ``entry`` is where the inf/nan first appeared."""
    how, fix = nonfinite_entered(op, filled)
    summary = said(f"{name}.grad contains inf/nan", f"the {value} entered the forward at {op.strip('_') or op}()"
                   f"{_at(entry.site)}{_code(entry.site)}, "
                   + ("which filled it in" if filled else "whose result holds it although its inputs do not")
                   + (f"; backward carried it to {node.name}." if node is not None else "."), of=name)
    detail = (f"{how[0].upper()}{how[1:]}. (gradscope read the step's values that were still alive after backward.)")
    return summary, detail, fix


@words("first_nonfinite_node")
def first_nonfinite_node_text(name, op, node, site):
    """first_nonfinite_node (nonfinite_gradient): summary, detail, fix."""
    where = (f"({op}{_at(site)}{_code(site)})" if site is not None or op != node.name
             else "(its forward ran outside the trace, so no line was recorded for it)")
    summary = said(f"{name}.grad contains inf/nan", f"the first non-finite gradient came from {node.name} {where}.")
    detail = ("Backward through this operation produced inf or nan from finite inputs "
              "(e.g. sqrt or log at 0, division by zero, overflow).")
    fix = ("guard the operation (add an epsilon, clamp its input) or use a numerically stable form.")
    return summary, detail, fix


@words("nonfinite_unknown")
def nonfinite_unknown_text(name):
    """nonfinite_unknown (nonfinite_gradient): summary, detail, fix."""
    summary = said(f"{name}.grad contains inf/nan.")
    detail = ("The trace did not see which node produced it.")
    fix = ("check the loss and inputs for inf/nan.")
    return summary, detail, fix


# --- ok -----------------------------------------------------------------------------------------
@words("unfrozen_after_optimizer_built")
def unfrozen_after_optimizer_built_text(name, norm, root, u):
    """unfrozen_after_optimizer_built (ok): summary, detail, fix."""
    n, via = _ok_norm(norm), _ok_via(root)
    summary = said(f"{name}.grad is set and non-zero{n}", f"gradient flows{via}; but no optimizer in the trace holds "
                   f"{name}: it was frozen when the optimizer's parameters were chosen and unfrozen only later"
                   f"{_at(u.site)}{_code(u.site)}, so optimizer.step() never updates it.", of=name)
    detail = ("An optimizer keeps the parameter list it was given; unfreezing a parameter afterwards "
              "does not add it (e.g. `[p for p in model.parameters() if p.requires_grad]`).")
    fix = ("add the unfrozen parameters with optimizer.add_param_group({'params': ...}), or build the "
           "optimizer over all parameters and freeze with requires_grad only.")
    return summary, detail, fix


@words("not_in_any_optimizer")
def not_in_any_optimizer_text(name, norm, root):
    """not_in_any_optimizer (ok): summary, detail, fix."""
    n, via = _ok_norm(norm), _ok_via(root)
    summary = said(f"{name}.grad is set and non-zero{n}", f"gradient flows{via}; but no optimizer in the trace holds "
                   f"{name}, so optimizer.step() never updates it.", of=name)
    detail = ("model.parameters() only lists registered parameters: modules kept in a plain Python list or "
              "dict, or tensors stored as plain attributes, are not registered.")
    fix = ("register it (nn.ModuleList / nn.ModuleDict / nn.ParameterList, or nn.Parameter as a module "
           "attribute) before building the optimizer, or add it with optimizer.add_param_group.")
    return summary, detail, fix


@words("gradient_flows")
def gradient_flows_text(name, norm, root):
    """gradient_flows (ok): summary, detail, fix."""
    n, via = _ok_norm(norm), _ok_via(root)
    summary = said(f"{name}.grad is set and non-zero{n}", f"gradient flows{via}.", of=name)
    detail = ""
    fix = ("nothing to fix.")
    return summary, detail, fix

@words("gradient_flows.create_graph")
def gradient_flows_create_graph_text(name, norm, root, b):
    """gradient_flows (ok): the gradient came from backward(create_graph=True), which leaks (torch's warning)."""
    n, via = _ok_norm(norm), _ok_via(root)
    summary = said(f"{name}.grad is set and non-zero{n}", f"gradient flows{via}, but backward{_at(b.site)}"
                   f"{_code(b.site)} runs with create_graph=True: the gradient it stores keeps a graph that refers back "
                   f"to {name}, a reference cycle that holds memory every step (torch warns of it).", of=name)
    detail = "backward(create_graph=True) is for higher-order gradients; torch.autograd.grad returns them instead."
    fix = ("use torch.autograd.grad(<loss>, <inputs>, create_graph=True) for the gradients you differentiate again, "
           "or clear the .grad fields (set them to None) after use.")
    return summary, detail, fix


@words("gradient_flows.legacy_hook")
def gradient_flows_legacy_hook_text(name, norm, root, path, site):
    """gradient_flows (ok): a register_backward_hook hook (not full) on a module around it (torch's warning)."""
    n, via = _ok_norm(norm), _ok_via(root)
    where = f"`{path}`" if path else "the model"
    summary = said(f"{name}.grad is set and non-zero{n}", f"gradient flows{via}, but the hook{_at(site)}{_code(site)} "
                   f"on {where} was registered with register_backward_hook: it sees the gradient of the module's last "
                   "operation only, not of its inputs and outputs (torch warns that this is deprecated).", of=name)
    detail = "register_full_backward_hook gives the gradients of the module's inputs and outputs."
    fix = "register it with register_full_backward_hook (the same signature: module, grad_input, grad_output)."
    return summary, detail, fix


# --- param_recreated ----------------------------------------------------------------------------
@words("other_instance_in_forward")
def other_instance_in_forward_text(name, mine, site):
    """other_instance_in_forward (param_recreated): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"the forward uses another {mine['class']} instance (created"
                   f"{_at(site)}{_code(site)}), not the one this parameter belongs to.", of=name)
    detail = ("The optimizer (or your code) holds parameters of an instance the forward no longer uses.")
    fix = ("build the optimizer from the model that runs the forward, after all layers are replaced.")
    return summary, detail, fix


@words("other_instance_in_forward.newer")
def other_instance_in_forward_newer_text(name, mine, site):
    """other_instance_in_forward (param_recreated): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"it belongs to a second {mine['class']} instance created"
                   f"{_at(site)}{_code(site)}, which the optimizer holds; the forward uses the first one.", of=name)
    detail = ("An optimizer built from the parameters of a new instance updates parameters the "
              "forward never uses.")
    fix = (f"in `{_plain(site)}`, pass the parameters of the {mine['class']} that runs the forward "
           f"instead of a new instance's.")
    return summary, detail, fix

# --- requires_grad_false ------------------------------------------------------------------------
@words("used_before_requires_grad")
def used_before_requires_grad_text(name, site, uses, late):
    """used_before_requires_grad (requires_grad_false): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"`{name}` was created{_at(site)}{_code(site)} without requires_grad and "
                   f"used{_at(uses[0].site)} before requires_grad was turned on{_at(late[0].site)}, so the recorded "
                   f"graph does not contain it.", of=name)
    detail = ("Autograd records an operation only if an input requires grad at the moment it runs.")
    fix = (f"create `{name}` with requires_grad=True (or call requires_grad_() before the forward pass).")
    return summary, detail, fix


@words("buffer")
def buffer_text(name, site):
    """buffer (requires_grad_false): summary, detail, fix."""
    summary = said(f"{name}.grad is None",
                   f"`{name}` is a buffer of the model (created{_at(site)}{_code(site)}), not a "
                   f"parameter: buffers are state that autograd treats as constants.", of=name)
    detail = ("Buffers (running statistics, position ids, masks) are saved with the model but never "
              "trained; only nn.Parameter attributes get gradients.")
    fix = (f"nothing to fix if `{name}` is state; if it should train, make it an nn.Parameter "
           f"instead of a buffer.")
    return summary, detail, fix


@words("created_without_requires_grad")
def created_without_requires_grad_text(name, site):
    """created_without_requires_grad (requires_grad_false): summary, detail, fix."""
    summary = said(f"{name}.grad is None",
                   f"`{name}` was created{_at(site)}{_code(site)} without requires_grad=True, so "
                   f"autograd treats it as a constant.", of=name)
    detail = ("Only tensors created with requires_grad=True (or made to require it) get a gradient.")
    fix = (f"create it with requires_grad=True, or call `{name}.requires_grad_()` right after creating it "
           f"(as a leaf: not after an arithmetic operation).")
    return summary, detail, fix


# --- unknown ------------------------------------------------------------------------------------
@words("backward_node_sent_none.compiled")
def backward_node_sent_none_compiled_text(name, site):
    """backward_node_sent_none (unknown): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"it is an input of the torch.compile'd region{_at(site)}, and that "
                   f"region sent it no gradient (judged from the gradients that arrived); whether it is "
                   f"unused or cut off happens inside compiled code, whose lines this backend hides.", of=name)
    detail = ("A backend that compiles the backward too (aot_eager, inductor) runs the forward as "
              "one graph, so gradscope sees neither its source lines nor the operation that "
              "stopped the gradient.")
    fix = ("trace the step with gradscope.trace(eager_compile=True) (`gradscope run "
           "--eager-compile`), which runs the compiled code eagerly while recording, to get the "
           "line; or use backend='eager'.")
    return summary, detail, fix


@words("unknown_error")
def unknown_error_text(x, msg):
    """unknown_error (unknown): summary, detail, fix."""
    summary = said(f"The traced step raised {x.type}", f"{msg.splitlines()[0] if msg else ''}")
    detail = ("gradscope has no rule for this error; the site is where it was raised.")
    fix = ("see the error message.")
    return summary, detail, fix

# --- unused_parameter ---------------------------------------------------------------------------
@words("hooked_module_not_called")
def hooked_module_not_called_text(name, owner, site):
    """hooked_module_not_called (unused_parameter): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"it is used only by a forward hook on `{owner}`, and `{owner}` was run"
                   f"{_at(site)}{_code(site)} without calling the module (its .forward(...)), which skips its hooks.", of=name)
    detail = ("Hooks run in Module.__call__; calling module.forward(x) directly runs the layer but none of "
              "its forward hooks.")
    fix = (f"call the module itself (`{owner.rsplit('.', 1)[-1]}(x)`), not its .forward(x).")
    return summary, detail, fix


@words("returned_input")
def returned_input_text(name, e, site):
    """returned_input (unused_parameter): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"{e.op} returned its input unchanged{_at(site)}{_code(site)}, so its "
                   f"layers (including {name}) never ran.", of=name)
    detail = ("A parameter that is not used in the forward gets no gradient (and DDP complains "
              "about unused parameters).")
    fix = (f"check the condition under which `{_plain(site)}` returns the input unchanged.")
    return summary, detail, fix


@words("never_used")
def never_used_text(name, dsite, called, mod):
    """never_used (unused_parameter): summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"{name} was never used by any torch call in the traced step"
                   + ("" if called or mod is None else f" (module `{mod}` was never called)")
                   + (f"; it is defined{_at(dsite)}{_code(dsite)}" if dsite else "") + ".", of=name)
    detail = ("A parameter that takes no part in the forward gets no gradient.")
    fix = (f"call `{mod}` in forward, or leave it out of the model/optimizer." if mod else
           f"use {name} in the forward, or leave it out of the optimizer.")
    return summary, detail, fix


@words("never_used.guarded")
def never_used_guarded_text(name, read, guard):
    """never_used (unused_parameter) behind a skip: summary, detail, fix."""
    summary = said(f"{name}.grad is None", f"{name} was never used by any torch call in the traced step; the line that "
                   f"reads it{_at(read)}{_code(read)} did not get to use it: `{guard.code}`{_at(guard)} comes first.", of=name)
    detail = "A parameter that takes no part in the forward gets no gradient."
    fix = (f"check the condition at `{guard.code}`: while it holds, {name} takes no part in the loss (fix the "
           f"condition, or leave {name} out of the optimizer for that case).")
    return summary, detail, fix


@words("result_discarded")
def result_discarded_text(name, site, dead):
    what = f"{dead.op}'s output" if dead is not None and dead.kind == "module" else "its result"
    """result_discarded (unused_parameter): summary, detail, fix."""
    summary = said(f"{name}.grad is None",
                   f"{name} was used{_at(site)}{_code(site)}, but {what} was never used afterwards, "
                   f"so it does not reach the loss.", of=name)
    detail = ("A result that is computed and then discarded contributes nothing to the loss.")
    fix = (f"use the output of `{dead.op}`{_at(site)} in what the loss is computed from (assign it and pass it "
           f"on), or remove `{dead.op}`." if dead is not None and dead.kind == "module" else
           f"use the result of `{_plain(site)}` (assign it and pass it on to what the loss is computed "
           f"from), or remove that computation." if _plain(site) else
           "use the result in what the loss is computed from, or remove that computation.")
    return summary, detail, fix


# --- zero_gradient ------------------------------------------------------------------------------
@words("zero_unknown")
def zero_unknown_text(name):
    """zero_unknown (zero_gradient): summary, detail, fix."""
    summary = said(f"{name}.grad is all zeros.", of=name)
    detail = ("The trace did not record which operation zeroed it.")
    fix = ("check activations for dead units and saturated clamps.")
    return summary, detail, fix

@words("piecewise_linear_curvature")
def piecewise_linear_curvature_text(name, order, act, site, e):
    """piecewise_linear_curvature (zero_gradient): summary, detail, fix."""
    nth = {2: "second", 3: "third"}.get(order, f"{order}th")
    summary = said(f"{name}.grad is all zeros", f"it multiplies{_at(e.site)}{_code(e.site)} a {nth} derivative taken "
                   f"with torch.autograd.grad of a network whose only nonlinearity is {act}{_at(site)}{_code(site)}: "
                   f"piecewise linear, so that derivative is exactly zero everywhere.", of=name)
    detail = ("ReLU-like activations are linear wherever their derivative exists; a network of linear layers and "
              "such activations has zero second (and higher) derivatives with respect to its input, so a term "
              "built from them (a PDE residual's u_xx in a physics-informed loss) gives no gradient.")
    fix = ("use a smooth activation there (torch.tanh, nn.SiLU, nn.GELU, nn.Softplus) when the loss needs "
           "derivatives of the network beyond the first.")
    return summary, detail, fix


@words("cancelled_uses")
def cancelled_uses_text(name, sent, site, root):
    """cancelled_uses (gradient_cancelled): summary, detail, fix."""
    norms = ", ".join(f"{v:.3g}" for v in sent[:4]) + (", ..." if len(sent) > 4 else "")
    loss = f"`{root}`" if root else "the loss"
    summary = said(f"{name}.grad is all zeros", f"its {len(sent)} uses in {loss}{_at(site)} each sent it a non-zero "
                   f"gradient (norms {norms}), and they cancel exactly. That is how this loss is built, not a cut.",
                   of=name)
    detail = ("Gradients from several uses of a tensor are summed. A loss that is a difference of two terms that "
              "depend on it in the same way (a WGAN critic's `D(fake).mean() - D(real).mean()` for its last bias, "
              "which shifts both terms equally) gives it exactly zero: the loss does not change with it.")
    fix = (f"nothing to fix. If {name} should learn from this loss, the two terms must depend on it differently.")
    return summary, detail, fix


# --- nondifferentiable_op or zero_gradient (the zeroing_op rule decides which) --------------------
@words("zeroing_op")
def zeroing_op_text(name, op, site, node, e, is_nd, single, hinge):
    """zeroing_op (cause): summary, detail, fix; the detail and fix by :func:`zero_op_text`."""
    why, fix = zero_op_text(e, op, is_nd, single, hinge)
    summary = said(f"{name}.grad is all zeros", f"gradient reaches {op}{_at(site)}{_code(site)} but comes out as zero "
                   f"({node.name}), so nothing flows back to {name}.", of=name)
    detail = (why)
    fix = (fix)
    return summary, detail, fix


@words("zeroing_op.mask")
def zeroing_op_mask_text(name, op, site, node, factor, made):
    """zeroing_op (zero_gradient): a product whose other factor, which needs no grad, is zero (a mask)."""
    summary = said(f"{name}.grad is all zeros", f"gradient reaches {op}{_at(site)}{_code(site)} but comes out as zero "
                   f"({node.name}): it is multiplied by `{factor}`, made{_at(made)}{_code(made)}, which is zero where "
                   f"the gradient arrives, so nothing flows back to {name}.", of=name)
    detail = ("The gradient of a product is the other factor; a mask that is all zero (everything masked or pruned "
              "away) stops it everywhere.")
    fix = (f"check how `{factor}` is made: a threshold, ratio or amount that masks everything (pruning amount=1.0, "
           "a mask from a condition that never holds).")
    return summary, detail, fix


# --- the cause of the failed backward (backward_failed) ------------------------------------------
@words("backward_failed")
def backward_failed_text(name, f):
    """backward_failed (f.cause): summary, detail, fix; ``f``: the failure's finding."""
    f = _Worded(*composed(f))
    summary = said(f"{name}.grad is None", f"the backward that should have reached it failed. {f.summary}", of=name)
    detail = (f.detail)
    fix = (f.fix)
    return summary, detail, fix
