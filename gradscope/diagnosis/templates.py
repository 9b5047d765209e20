"""Templates per cause: the summary, detail and fix of each rule's finding, filled from the user's own code and
names (the sites, the names, the code the rules found). Rules decide (cause, site, evidence); these say it.
No template names a model, a library or a value from a particular scenario (tests/test_rules.py scans them)."""
from __future__ import annotations

from .common import _opname
from .wording import _at, _code, _out_of_place, _plain, py_expr


# --- autograd_grad_not_backward -----------------------------------------------------------------
def autograd_grad_only_text(name, api, e, func_api):
    """autograd_grad_only (autograd_grad_not_backward): summary, detail, fix."""
    summary = (f"{name}.grad is None: the step computed gradients with {api}{_at(e.site)}{_code(e.site)}, "
               f"which returns them instead of storing them in .grad.")
    detail = (f"{api} never writes .grad; optimizer.step() then sees no gradients.")
    fix = ("assign the returned gradients before optimizer.step(): torch.func.grad returns them in the "
           "structure of its input, e.g. `for n, p in <module>.named_parameters(): p.grad = grads[n]`."
           if func_api else
           "use loss.backward() (then clip with torch.nn.utils.clip_grad_norm_), or assign the returned "
           "gradients: `for p, g in zip(params, grads): p.grad = g`.")
    return summary, detail, fix


def cleared_then_autograd_grad_text(name, e, clears):
    """cleared_then_autograd_grad (autograd_grad_not_backward): summary, detail, fix."""
    summary = (f"{name}.grad is None: it was cleared{_at(clears[-1].site)}, then its next gradient was computed "
               f"with torch.autograd.grad{_at(e.site)}{_code(e.site)}, which returns it instead of storing it "
               f"in .grad.")
    detail = ("torch.autograd.grad(outputs, inputs) never writes .grad; optimizer.step() then sees no "
              "gradients.")
    fix = ("use loss.backward() for that pass, or assign the returned gradients: "
           "`for p, g in zip(params, grads): p.grad = g`.")
    return summary, detail, fix


def no_grad_fn_text2(root, e):
    """no_grad_fn (autograd_grad_not_backward): summary, detail, fix."""
    summary = (f"backward on `{root}` failed: it is built from gradients returned by torch.autograd.grad"
               f"{_at(e.site)}{_code(e.site)} without create_graph=True, so they carry no graph to differentiate.")
    detail = ("autograd.grad returns plain tensors unless create_graph=True records the backward pass itself.")
    fix = ("pass create_graph=True to torch.autograd.grad when the gradients are used in a loss (gradient "
           "penalties, meta-learning).")
    return summary, detail, fix

# --- backward_twice -----------------------------------------------------------------------------
def backward_twice_text(bw, prev):
    """backward_twice (backward_twice): summary, detail, fix."""
    summary = (f"backward{_at(bw.site if bw else None)} ran through a graph that an earlier backward"
               f"{_at(prev.site if prev else None)} already freed.")
    detail = ("After backward, autograd frees the saved tensors of the graph. Running backward again through any "
              "part of it fails, e.g. when a hidden state is carried across steps without detach().")
    fix = ("detach state carried between steps (`<state> = <state>.detach()`), recompute the forward, or pass "
           "retain_graph=True to the first backward if you really need two.")
    return summary, detail, fix


def backward_twice_text2(name, bw, p, prev, e):
    """backward_twice (backward_twice): summary, detail, fix."""
    summary = (f"backward{_at(bw.site)} failed: `{name}` was computed{_at(p.site if p else None)} before the earlier "
               f"backward{_at(prev.site)} and is used again{_at(e.site)}{_code(e.site)} without detach(), so the new "
               f"backward runs into the freed graph.")
    detail = ("After backward, autograd frees the saved tensors of the graph. A tensor carried into the next "
              "step (an RNN hidden state, a running statistic) still points into that freed graph.")
    fix = (f"detach the carried state before reusing it (`{name} = {name}.detach()`), or pass "
           f"retain_graph=True to the earlier backward if you really need gradients through both.")
    return summary, detail, fix


def backward_twice_text3(dx, name, bw, p, prev):
    """backward_twice (backward_twice): summary, detail, fix."""
    summary = (f"backward{_at(bw.site)} failed: `{name}` (computed{_at(p.site)}) feeds more than one loss, and the "
               f"earlier backward{_at(prev.site)} already freed the graph behind it.")
    detail = ("Each backward frees the graph it ran through; a second loss built on the same shared "
              "part cannot backpropagate through it again.")
    fix = (dx._one_backward_fix(prev, bw))
    return summary, detail, fix

# --- custom_function ----------------------------------------------------------------------------
def custom_function_zero_text(name, fn, site):
    """custom_function_zero (custom_function): summary, detail, fix."""
    summary = (f"{name}.grad is all zeros: the custom autograd.Function {fn} returns a zero gradient"
               f"{_at(site)}{_code(site)}, so nothing flows back to {name}.")
    detail = ("Everything before a custom Function gets only what its backward() returns.")
    fix = (f"implement the real derivative in {fn}.backward (check it with torch.autograd.gradcheck).")
    return summary, detail, fix


def backward_node_sent_none_text2(name, j, which, site, n):
    """backward_node_sent_none (custom_function): summary, detail, fix."""
    summary = (f"{name}.grad is None: the custom autograd.Function {n.name.replace('Backward', '')} "
               f"returns None as the gradient for input {j} {which} at {site.short}{_code(site)}.")
    detail = ("A custom Function's backward must return one gradient per forward input; "
              "None means 'no gradient' for that input.")
    fix = (f"compute and return the gradient with respect to {name} in backward() "
           f"(same shape as {name}).")
    return summary, detail, fix


def once_differentiable_text(fn, where, site):
    """once_differentiable (custom_function): summary, detail, fix."""
    summary = (f"backward failed: {fn}.backward{_at(site)} is decorated with @once_differentiable, but the step "
               f"differentiates through it a second time{where}.")
    detail = ("@once_differentiable runs backward without recording a graph, so its result cannot be "
              "differentiated again (gradient penalties, double backward, meta-learning).")
    fix = (f"remove @once_differentiable and write {fn}.backward with differentiable torch operations, or keep "
           f"this Function out of the part that is differentiated twice.")
    return summary, detail, fix


def custom_function_gradients_text(first, site, node):
    """custom_function_gradients (custom_function): summary, detail, fix."""
    summary = (f"backward failed in the custom autograd.Function {node.name.replace('Backward', '')}: its backward "
               f"returns{_at(site)}{_code(site)} gradients that do not match its forward inputs ({first}).")
    detail = ("backward() must return exactly one gradient (or None) per input of forward(), each with the shape "
              "of that input.")
    fix = ("return one value per forward input, in order, with matching shapes (None for inputs that need no "
           "gradient).")
    return summary, detail, fix

# --- frozen_param -------------------------------------------------------------------------------
def frozen_in_trace_text(name, note, whole, e):
    """frozen_in_trace (frozen_param): summary, detail, fix."""
    summary = (f"{name}.grad is None: {name} was frozen{_at(e.site)}{_code(e.site)} (requires_grad=False), so "
               f"autograd does not compute its gradient." + (f" {whole[0]}" if whole else "") + note)
    detail = ("A tensor with requires_grad=False is treated as a constant.")
    fix = (whole[1] if whole and whole[1] else
           f"set {py_expr(name)}.requires_grad_(True) again before the step that should train it, or fix the "
           f"condition that froze it.")
    return summary, detail, fix


def created_frozen_text(name, note, site):
    """created_frozen (frozen_param): summary, detail, fix."""
    summary = (f"{name}.grad is None: {name} was created with requires_grad=False{_at(site)}{_code(site)}, "
               f"so autograd treats it as a constant.{note}")
    detail = ("nn.Parameter(..., requires_grad=False) and from_pretrained(..., freeze=True) create "
              "frozen parameters.")
    fix = (("pass freeze=False in `" + _plain(site) + "`" if "freeze=True" in _plain(site) else
            "create it with requires_grad=True") + f", or call "
           f"{py_expr(name)}.requires_grad_(True) before building the optimizer.")
    return summary, detail, fix


def frozen_before_trace_text(name, note):
    """frozen_before_trace (frozen_param): summary, detail, fix."""
    summary = (f"{name}.grad is None: {name} has requires_grad=False (it was frozen before the trace started).{note}")
    detail = ("A parameter with requires_grad=False is treated as a constant.")
    fix = (f"call {py_expr(name)}.requires_grad_(True) where the model is set up, if it should train.")
    return summary, detail, fix


def no_grad_fn_text3(whole, root, shown, e, names):
    """no_grad_fn (frozen_param): summary, detail, fix."""
    summary = (f"backward on `{root}` failed: nothing in it requires grad because {shown} "
               f"{'was' if len(names) == 1 else 'were'} frozen{_at(e.site)}{_code(e.site)} and never unfrozen."
               + (f" {whole[0]}" if whole else ""))
    detail = ("With every parameter frozen (requires_grad=False) and the other inputs detached, the loss has no "
              "grad_fn, so backward has nothing to differentiate.")
    fix = (whole[1] if whole and whole[1] else
           f"set requires_grad_(True) again on {shown} before the step that trains them (after the step "
           f"that needed them frozen).")
    return summary, detail, fix


def no_grad_fn_text5(dx, root, params):
    """no_grad_fn (frozen_param): summary, detail, fix."""
    summary = (f"backward on `{root}` failed: its parameters ({', '.join(dx.label(p) for p in params[:3])}) have "
               f"requires_grad=False.")
    detail = ""
    fix = ("unfreeze the parameters that should train.")
    return summary, detail, fix

# --- hook_modified ------------------------------------------------------------------------------
def module_backward_hook_zero_text(name, path, site):
    """module_backward_hook_zero (hook_modified): summary, detail, fix."""
    summary = (f"{name}.grad is all zeros: the backward hook on module `{path or 'the model'}` returns a zero "
               f"gradient{_at(site)}{_code(site)}, so nothing flows back to {name}.")
    detail = ("What a module backward hook (register_full_backward_hook) returns replaces the "
              "gradient with respect to the module's inputs.")
    fix = ("return None from the hook to keep the gradient, or fix the scaling it applies.")
    return summary, detail, fix


def tensor_hook_zero_text(dx, name, tn, site, h):
    """tensor_hook_zero (hook_modified): summary, detail, fix."""
    summary = (f"{name}.grad is all zeros: the hook on `{tn}` registered{_at(h.site)} returns a zero gradient"
               f"{_at(site)}{_code(site)}, so nothing flows back to {name}.")
    detail = ("A tensor hook's return value replaces the gradient flowing through that tensor.")
    fix = (dx._hook_fix(h, f"check what the hook returns (`{_plain(site)}` is zero here); "
           f"return None from the hook to leave the gradient unchanged."))
    return summary, detail, fix


def forward_hook_replaced_output_text(name, dead, site):
    """forward_hook_replaced_output (hook_modified): summary, detail, fix."""
    summary = (f"{name}.grad is None: a forward hook on `{dead.op}` returns a value{_at(site)}{_code(site)}, "
               f"which replaces the module's output, so what {name} computed never reaches the loss.")
    detail = ("A forward hook (register_forward_hook) that returns something other than None replaces "
              "the module's output with it.")
    fix = ("return None from a hook that only looks at (or collects) the output; return a modified "
           "output only on purpose.")
    return summary, detail, fix

# --- inference_mode -----------------------------------------------------------------------------
def inference_tensor_saved_text(site, e):
    """inference_tensor_saved (inference_mode): summary, detail, fix."""
    summary = (f"backward cannot use a tensor created under torch.inference_mode(){_at(site)}{_code(site)}: "
               f"{_opname(e) if e else 'an operation'}{_at(e.site if e else None)} tried to save it for backward.")
    detail = ("Inference tensors have no version counter and cannot be saved for backward.")
    fix = ("compute it outside torch.inference_mode() when it takes part in training (cloning it only hides "
           "the problem: the clone has no history).")
    return summary, detail, fix

# --- inplace_saved_tensor -----------------------------------------------------------------------
def inplace_modified_saved_tensor_text(dx, op, who, what, saved_txt, e):
    """inplace_modified_saved_tensor (inplace_saved_tensor): summary, detail, fix."""
    summary = (f"backward failed: {op}{who}{_at(e.site)}{_code(e.site)} modified {what} in place after it was saved "
               f"for backward{saved_txt}.")
    detail = ("Autograd saves some inputs/outputs of an operation to compute its gradient; writing into them "
              "afterwards (+=, x[...] = v, add_, relu(inplace=True), optimizer.step()) makes the saved value wrong, "
              "so backward refuses to run.")
    fix = ("a graph kept alive across steps (retain_graph=True, e.g. on a hidden state carried into the next "
           "batch) still holds the weights that optimizer.step() changed: detach the carried state every step "
           "(`<state> = <state>.detach()`) and drop retain_graph=True."
           if e.context == "optimizer" and any(b.kind == "backward" and b.detail.get("retain_graph")
                                               and b.index < e.index for b in dx.ev) else
           _out_of_place(e.site.code if e.site else "") or
           (f"write `{_plain(e.site)}` out of place (a new tensor instead of writing into one autograd "
            f"saved; inplace=False for activations)" + (", or run backward for every loss before "
                                                        "optimizer.step() changes the weights"
                                                        if e.context == "optimizer" else "") + "."))
    return summary, detail, fix


def inplace_modified_saved_tensor_text2(msg):
    """inplace_modified_saved_tensor (inplace_saved_tensor): summary, detail, fix."""
    summary = ("backward failed: a tensor saved for backward was modified in place, but the trace did not see the write "
               "(it may have happened through .data, NumPy, or outside the traced block).")
    detail = (msg.splitlines()[0])
    fix = ("look for in-place writes (+=, x[...] =, add_, relu_(inplace=True)) on "
           "tensors used earlier in the forward.")
    return summary, detail, fix

# --- leaf_replaced_by_to ------------------------------------------------------------------------
def to_copy_is_not_a_leaf_text(name, site, prod):
    """to_copy_is_not_a_leaf (leaf_replaced_by_to): summary, detail, fix."""
    summary = (f"{name}.grad is None: `{name}` was rebound{_at(site)}{_code(site)} to a .{_opname(prod)}() copy, "
               f"which is not a leaf; the gradient went to the original tensor.")
    detail = ("Only leaf tensors get .grad. A .to()/.double()/.float() result is a new, non-leaf tensor "
              "that autograd passes the gradient through.")
    fix = (f"create the tensor with the dtype/device you need directly (pass dtype=/device= and "
           f"requires_grad=True where it is made) instead of `{_plain(site)}`, or keep a name for the "
           f"original leaf and read its .grad.")
    return summary, detail, fix

# --- no_backward --------------------------------------------------------------------------------
def no_backward_text(name):
    """no_backward (no_backward): summary, detail, fix."""
    summary = (f"{name}.grad is None: no backward ran inside the trace.")
    detail = ("Gradients are only computed by loss.backward() (or torch.autograd.backward).")
    fix = ("call loss.backward() inside the traced block.")
    return summary, detail, fix

# --- no_grad_block ------------------------------------------------------------------------------
def manual_update_rebind_text(name, w, site):
    """manual_update_rebind (no_grad_block): summary, detail, fix."""
    summary = (f"{name}.grad is None: `{w}` was rebound{_at(site)}{_code(site)} to the result of a manual update "
               f"made under no_grad, a new tensor that does not require grad; the leaf that trained is no longer "
               f"the one `{w}` names.")
    detail = ("Under no_grad an out-of-place update creates a new tensor without history and rebinds the "
              "name; the original leaf keeps its gradient but is not updated.")
    fix = (f"update it in place under no_grad so it stays the leaf that requires grad: `{w} -= lr * "
           f"{w}.grad`, then `{w}.grad = None` (or use a torch.optim optimizer).")
    return summary, detail, fix

# --- non_leaf_no_retain_grad --------------------------------------------------------------------
def retain_grad_after_backward_text(name, site, rg):
    """retain_grad_after_backward (non_leaf_no_retain_grad): summary, detail, fix."""
    summary = (f"{name}.grad is None: `{name}` is not a leaf (computed{_at(site)}{_code(site)}) and "
               f"retain_grad() was called only after backward{_at(rg[0].site)}, which is too late.")
    detail = ("retain_grad() asks autograd to keep the gradient in later backward passes; it cannot "
              "recover one that already ran.")
    fix = (f"call `{name}.retain_grad()` right after `{name}` is computed, before loss.backward().")
    return summary, detail, fix


def non_leaf_text(name, site, fix):
    """non_leaf (non_leaf_no_retain_grad): summary, detail, fix."""
    summary = (f"{name}.grad is None: `{name}` is not a leaf (it was computed{_at(site)}{_code(site)}), and PyTorch "
               f"only fills .grad of leaves unless retain_grad() is called.")
    detail = ("Gradient flows through non-leaf tensors but is not stored on them by default.")
    fix = (fix)
    return summary, detail, fix

# --- nondifferentiable_op -----------------------------------------------------------------------
def no_derivative_text(op, e):
    """no_derivative (nondifferentiable_op): summary, detail, fix."""
    summary = (f"backward failed: {_opname(e)}(){_at(e.site)}{_code(e.site)} has no derivative in PyTorch ('{op}').")
    detail = ("Some operations (unique, sort indices, bucketize, ...) have no gradient formula; backward "
              "cannot pass through them.")
    fix = ("keep this operation out of the path to the loss (compute it on a detached copy), or use a "
           "differentiable surrogate.")
    return summary, detail, fix

# --- nonfinite_gradient -------------------------------------------------------------------------
def first_nonfinite_node_text(name, op, node, site):
    """first_nonfinite_node (nonfinite_gradient): summary, detail, fix."""
    summary = (f"{name}.grad contains inf/nan: the first non-finite gradient came from {node.name} "
               f"({op}{_at(site)}{_code(site)}).")
    detail = ("Backward through this operation produced inf or nan from finite inputs "
              "(e.g. sqrt or log at 0, division by zero, overflow).")
    fix = ("guard the operation (add an epsilon, clamp its input) or use a numerically stable form.")
    return summary, detail, fix


def nonfinite_unknown_text(name):
    """nonfinite_unknown (nonfinite_gradient): summary, detail, fix."""
    summary = (f"{name}.grad contains inf/nan.")
    detail = ("The trace did not see which node produced it.")
    fix = ("check the loss and inputs for inf/nan.")
    return summary, detail, fix

# --- numpy_roundtrip ----------------------------------------------------------------------------
def numpy_of_grad_tensor_text(what, e):
    """numpy_of_grad_tensor (numpy_roundtrip): summary, detail, fix."""
    summary = (f"numpy() failed{_at(e.site if e else None)}{_code(e.site if e else None)}: `{what}` requires grad, and a "
               f"NumPy array cannot carry gradients.")
    detail = ("PyTorch refuses to convert a tensor that is part of the autograd graph, because the NumPy result "
              "would silently cut gradient flow.")
    fix = (f"for logging/plotting: `{what}.detach().cpu().numpy()`; if the result feeds the loss, keep the "
           f"computation in torch instead.")
    return summary, detail, fix

# --- ok -----------------------------------------------------------------------------------------
def unfrozen_after_optimizer_built_text(name, n, via, u):
    """unfrozen_after_optimizer_built (ok): summary, detail, fix."""
    summary = (f"{name}.grad is set and non-zero{n}: gradient flows{via}; but no optimizer in the trace holds "
               f"{name}: it was frozen when the optimizer's parameters were chosen and unfrozen only later"
               f"{_at(u.site)}{_code(u.site)}, so optimizer.step() never updates it.")
    detail = ("An optimizer keeps the parameter list it was given; unfreezing a parameter afterwards "
              "does not add it (e.g. `[p for p in model.parameters() if p.requires_grad]`).")
    fix = ("add the unfrozen parameters with optimizer.add_param_group({'params': ...}), or build the "
           "optimizer over all parameters and freeze with requires_grad only.")
    return summary, detail, fix


def not_in_any_optimizer_text(name, n, via):
    """not_in_any_optimizer (ok): summary, detail, fix."""
    summary = (f"{name}.grad is set and non-zero{n}: gradient flows{via}; but no optimizer in the trace holds "
               f"{name}, so optimizer.step() never updates it.")
    detail = ("model.parameters() only lists registered parameters: modules kept in a plain Python list or "
              "dict, or tensors stored as plain attributes, are not registered.")
    fix = ("register it (nn.ModuleList / nn.ModuleDict / nn.ParameterList, or nn.Parameter as a module "
           "attribute) before building the optimizer, or add it with optimizer.add_param_group.")
    return summary, detail, fix


def gradient_flows_text(name, n, via):
    """gradient_flows (ok): summary, detail, fix."""
    summary = (f"{name}.grad is set and non-zero{n}: gradient flows{via}.")
    detail = ""
    fix = ("nothing to fix.")
    return summary, detail, fix

# --- param_recreated ----------------------------------------------------------------------------
def other_instance_in_forward_text(name, mine, site):
    """other_instance_in_forward (param_recreated): summary, detail, fix."""
    summary = (f"{name}.grad is None: the forward uses another {mine['class']} instance (created"
               f"{_at(site)}{_code(site)}), not the one this parameter belongs to.")
    detail = ("The optimizer (or your code) holds parameters of an instance the forward no longer uses.")
    fix = ("build the optimizer from the model that runs the forward, after all layers are replaced.")
    return summary, detail, fix


def other_instance_in_forward_text2(name, mine, site):
    """other_instance_in_forward (param_recreated): summary, detail, fix."""
    summary = (f"{name}.grad is None: it belongs to a second {mine['class']} instance created"
               f"{_at(site)}{_code(site)}, which the optimizer holds; the forward uses the first one.")
    detail = ("An optimizer built from the parameters of a new instance updates parameters the "
              "forward never uses.")
    fix = (f"in `{_plain(site)}`, pass the parameters of the {mine['class']} that runs the forward "
           f"instead of a new instance's.")
    return summary, detail, fix

# --- requires_grad_false ------------------------------------------------------------------------
def used_before_requires_grad_text(name, site, uses, late):
    """used_before_requires_grad (requires_grad_false): summary, detail, fix."""
    summary = (f"{name}.grad is None: `{name}` was created{_at(site)}{_code(site)} without requires_grad and "
               f"used{_at(uses[0].site)} before requires_grad was turned on{_at(late[0].site)}, so the recorded "
               f"graph does not contain it.")
    detail = ("Autograd records an operation only if an input requires grad at the moment it runs.")
    fix = (f"create `{name}` with requires_grad=True (or call requires_grad_() before the forward pass).")
    return summary, detail, fix


def buffer_text(name, site):
    """buffer (requires_grad_false): summary, detail, fix."""
    summary = (f"{name}.grad is None: `{name}` is a buffer of the model (created{_at(site)}{_code(site)}), not a "
               f"parameter: buffers are state that autograd treats as constants.")
    detail = ("Buffers (running statistics, position ids, masks) are saved with the model but never "
              "trained; only nn.Parameter attributes get gradients.")
    fix = (f"nothing to fix if `{name}` is state; if it should train, make it an nn.Parameter "
           f"instead of a buffer.")
    return summary, detail, fix


def created_without_requires_grad_text(name, site):
    """created_without_requires_grad (requires_grad_false): summary, detail, fix."""
    summary = (f"{name}.grad is None: `{name}` was created{_at(site)}{_code(site)} without requires_grad=True, so "
               f"autograd treats it as a constant.")
    detail = ("Only tensors created with requires_grad=True (or made to require it) get a gradient.")
    fix = (f"create it with requires_grad=True, or call `{name}.requires_grad_()` right after creating it "
           f"(as a leaf: not after an arithmetic operation).")
    return summary, detail, fix


def no_grad_fn_text(dx, leaves, root):
    """no_grad_fn (requires_grad_false): summary, detail, fix."""
    summary = (f"backward on `{root}` failed: none of the tensors it was computed from requires grad"
               + (f" ({', '.join(dx.label(t) for t in leaves[:3])})" if leaves else "") + ".")
    detail = ""
    fix = ("create the parameters with requires_grad=True (or use nn.Parameter).")
    return summary, detail, fix

# --- unknown ------------------------------------------------------------------------------------
def backward_node_sent_none_text(name, site):
    """backward_node_sent_none (unknown): summary, detail, fix."""
    summary = (f"{name}.grad is None: it is an input of the torch.compile'd region{_at(site)}, and that "
               f"region sent it no gradient (judged from the gradients that arrived); whether it is "
               f"unused or cut off happens inside compiled code, whose lines this backend hides.")
    detail = ("A backend that compiles the backward too (aot_eager, inductor) runs the forward as "
              "one graph, so gradscope sees neither its source lines nor the operation that "
              "stopped the gradient.")
    fix = ("trace the step with gradscope.trace(eager_compile=True) (`gradscope run "
           "--eager-compile`), which runs the compiled code eagerly while recording, to get the "
           "line; or use backend='eager'.")
    return summary, detail, fix


def no_grad_fn_text6(dx, root, rg):
    """no_grad_fn (unknown): summary, detail, fix."""
    summary = (f"backward on `{root}` failed: `{root}` does not require grad, although it was computed from "
               f"{', '.join(dx.label(t) for t in rg[:3])}, which do; the trace did not see where the connection "
               f"was cut.")
    detail = ("Something between them dropped the graph without a recorded call: code outside the traced "
              "block, an extension op, or a value rebuilt from Python numbers.")
    fix = (f"print `.requires_grad` / `.grad_fn` of the intermediate results between "
           f"{dx.label(rg[0])} and `{root}`; the first one without a grad_fn is the cut.")
    return summary, detail, fix


def unknown_error_text(x, msg):
    """unknown_error (unknown): summary, detail, fix."""
    summary = (f"The traced step raised {x.type}: {msg.splitlines()[0] if msg else ''}")
    detail = ("gradscope has no rule for this error; the site is where it was raised.")
    fix = ("see the error message.")
    return summary, detail, fix

# --- unused_parameter ---------------------------------------------------------------------------
def hooked_module_not_called_text(name, owner, site):
    """hooked_module_not_called (unused_parameter): summary, detail, fix."""
    summary = (f"{name}.grad is None: it is used only by a forward hook on `{owner}`, and `{owner}` was run"
               f"{_at(site)}{_code(site)} without calling the module (its .forward(...)), which skips its hooks.")
    detail = ("Hooks run in Module.__call__; calling module.forward(x) directly runs the layer but none of "
              "its forward hooks.")
    fix = (f"call the module itself (`{owner.rsplit('.', 1)[-1]}(x)`), not its .forward(x).")
    return summary, detail, fix


def returned_input_text(name, e, site):
    """returned_input (unused_parameter): summary, detail, fix."""
    summary = (f"{name}.grad is None: {e.op} returned its input unchanged{_at(site)}{_code(site)}, so its "
               f"layers (including {name}) never ran.")
    detail = ("A parameter that is not used in the forward gets no gradient (and DDP complains "
              "about unused parameters).")
    fix = (f"check the condition under which `{_plain(site)}` returns the input unchanged.")
    return summary, detail, fix


def never_used_text(name, dsite, called, mod):
    """never_used (unused_parameter): summary, detail, fix."""
    summary = (f"{name}.grad is None: {name} was never used by any torch call in the traced step"
               + ("" if called or mod is None else f" (module `{mod}` was never called)")
               + (f"; it is defined{_at(dsite)}{_code(dsite)}" if dsite else "") + ".")
    detail = ("A parameter that takes no part in the forward gets no gradient.")
    fix = (f"call `{mod}` in forward, or leave it out of the model/optimizer." if mod else
           f"use {name} in the forward, or leave it out of the optimizer.")
    return summary, detail, fix


def result_discarded_text(name, what, site, dead):
    """result_discarded (unused_parameter): summary, detail, fix."""
    summary = (f"{name}.grad is None: {name} was used{_at(site)}{_code(site)}, but {what} was never used afterwards, "
               f"so it does not reach the loss.")
    detail = ("A result that is computed and then discarded contributes nothing to the loss.")
    fix = (f"use the output of `{dead.op}`{_at(site)} in what the loss is computed from (assign it and pass it "
           f"on), or remove `{dead.op}`." if dead is not None and dead.kind == "module" else
           f"use the result of `{_plain(site)}` (assign it and pass it on to what the loss is computed "
           f"from), or remove that computation." if _plain(site) else
           "use the result in what the loss is computed from, or remove that computation.")
    return summary, detail, fix


def grad_input_unused_text():
    """grad_input_unused (unused_parameter): summary, detail, fix."""
    summary = ("torch.autograd.grad failed: one of the inputs was not used to compute the outputs.")
    detail = ""
    fix = ("pass allow_unused=True, or remove that input.")
    return summary, detail, fix


def reduction_unused_text(shown, reason, names, e, sub):
    """reduction_unused (unused_parameter): summary, detail, fix."""
    summary = (f"DistributedDataParallel stopped{_at(e.site if e else None)}: {len(names)} parameter(s) did not receive "
               f"a gradient in the previous iteration: {shown}; {reason}")
    detail = ("DDP waits for a gradient for every parameter it holds; a parameter the forward did not use "
              "never gets one, so the reduction of the previous iteration never finished.")
    fix = (sub.fix.rstrip(".") + "; if skipping it is intended, pass find_unused_parameters=True to "
           "DistributedDataParallel (or set requires_grad=False on it).")
    return summary, detail, fix

# --- zero_gradient ------------------------------------------------------------------------------
def zero_unknown_text(name):
    """zero_unknown (zero_gradient): summary, detail, fix."""
    summary = (f"{name}.grad is all zeros.")
    detail = ("The trace did not record which operation zeroed it.")
    fix = ("check activations for dead units and saturated clamps.")
    return summary, detail, fix

# --- cause ----------------------------------------------------------------------------------------
def zeroing_op_text(name, op, site, node, why, fix):
    """zeroing_op (cause): summary, detail, fix."""
    summary = (f"{name}.grad is all zeros: gradient reaches {op}{_at(site)}{_code(site)} but comes out as zero "
               f"({node.name}), so nothing flows back to {name}.")
    detail = (why)
    fix = (fix)
    return summary, detail, fix


def no_grad_fn_text4(off, root, what, site, se, same, fix):
    """no_grad_fn (cause): summary, detail, fix."""
    summary = (f"backward on `{root}` failed: `{root}` does not require grad because {what} was computed while grad "
               f"was switched off{_at(site)}{_code(site)}; {off}." if off else
               f"backward on `{root}` failed: `{root}` does not require grad because {what} "
               f"{'were' if len(same) > 1 else 'was'} cut off from autograd"
               f"{_at(site)}{_code(site)} ({_opname(se)}), and nothing else in it requires grad.")
    detail = ("backward() needs a result with a grad_fn; every path from a trainable tensor to it was cut.")
    fix = (fix)
    return summary, detail, fix


def no_grad_fn_text7(root, w, site, fix):
    """no_grad_fn (cause): summary, detail, fix."""
    summary = (f"backward on `{root}` failed: `{w}` was rebound{_at(site)}{_code(site)} to the result of "
               f"an update made under no_grad, a new tensor that does not require grad, so `{root}` computed "
               f"from it has no grad_fn.")
    detail = ("Under no_grad, `w = w - lr * w.grad` creates a new tensor without history and rebinds the "
              "name; the original leaf that required grad is no longer used.")
    fix = (fix)
    return summary, detail, fix


def no_grad_fn_text8(dx, root, what, site, cause, se, e):
    """no_grad_fn (cause): summary, detail, fix."""
    summary = (f"backward on `{root}` failed: `{root}` has no autograd history (it was built outside torch); the "
               f"last value that left autograd before it was {what}{_at(site)}{_code(site)}.")
    detail = ("backward() needs a result with a grad_fn; a tensor rebuilt from NumPy or Python numbers "
              "has none.")
    fix = (dx._cut_explanation(e.inputs[0].tid if e.inputs else 0, what, cause, se, e, [], None, root).fix)
    return summary, detail, fix

# --- f.cause --------------------------------------------------------------------------------------
def backward_failed_text(name, f):
    """backward_failed (f.cause): summary, detail, fix."""
    summary = (f"{name}.grad is None: the backward that should have reached it failed. {f.summary}")
    detail = (f.detail)
    fix = (f.fix)
    return summary, detail, fix
