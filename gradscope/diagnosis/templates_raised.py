"""Templates of :func:`.rules_raised.raised_here`, one per form: the errors PyTorch raises at the line that is
their cause. Each gets the line (``site``), the op the trace saw raise there (``op``, or None), the tensor it was
given (``tensor``: its name, or None) and the message's own values (``got``)."""
from __future__ import annotations

from .wording import _at, _code, said, words


def _failed(site, op, what="the call") -> str:
    """"<op>() at <line> (`code`) failed" (``what`` in place of the op where the trace saw no call raise)."""
    return f"{op + '()' if op else what}{_at(site)}{_code(site)} failed"


def _named(tensor, default) -> str:
    return f"`{tensor}`" if tensor and not (tensor[0] == "t" and tensor[1:].isdigit()) else default


@words("raised_here.leaf")
def leaf_text(site, op, tensor, got):
    """raised_here (leaf_inplace): an in-place op on a leaf that requires grad, with grad recorded."""
    summary = said(_failed(site, op), f"it writes in place into {_named(tensor, 'a leaf tensor')}, which requires grad "
                   "(a parameter or an input you want the gradient of), while autograd is recording.")
    detail = ("Autograd cannot record an in-place change of a leaf whose gradient it has to compute: the values the "
              "gradient is for would be gone. Initialisations and hand-written updates belong outside the graph.")
    fix = ("for an initialisation or an update, run it under `with torch.no_grad():` (or use `torch.nn.init.*`, which "
           "does); if it is part of the computation, use the out-of-place op (`<w> = <w> * <scale>`, not `<w> *= <scale>`).")
    return summary, detail, fix


@words("raised_here.leaf_view")
def leaf_view_text(site, op, tensor, got):
    """raised_here (leaf_inplace): an in-place write into a view (a slice, a row) of a leaf that requires grad."""
    summary = said(_failed(site, op), f"it writes in place into a view (a slice) of {_named(tensor, 'a leaf tensor')}, "
                   "which requires grad, while autograd is recording.")
    detail = ("A slice of a parameter is a view of it: writing into the view writes into the leaf, which autograd "
              "cannot record for a tensor whose gradient it has to compute.")
    fix = ("when it sets values once (a padding row, a masked column), do it under `with torch.no_grad():`; when the "
           "mask is part of the model, multiply by a mask instead (`<w> = <w> * <mask>`), or use the layer's own option "
           "(nn.Embedding's padding_idx).")
    return summary, detail, fix


@words("raised_here.out_argument")
def out_argument_text(site, op, tensor, got):
    """raised_here (out_argument): ``torch.fn(..., out=buf)`` with an input that requires grad."""
    fn = got[0] if got else (op or "the function")
    summary = said(_failed(site, op, fn + "()"), f"{fn}() was given an out= buffer, and one of its inputs requires grad; "
                   "a result written into out= has no history.")
    detail = ("Functions called with out=... write into an existing tensor and do not support autograd; PyTorch refuses "
              "rather than silently cut the gradient.")
    fix = (f"assign the result instead (`<buf> = torch.{fn}(...)`, or `<acc> = <acc> + ...` for a running sum); keep the "
           "preallocated buffer only for values computed under `torch.no_grad()`.")
    return summary, detail, fix


@words("raised_here.multi_output_view")
def multi_output_view_text(site, op, tensor, got):
    """raised_here (multi_output_view_inplace): an in-place op on one of the views split/chunk/unbind returned."""
    node = got[0] if got else "split"
    plain = (op or "").rstrip("_")
    summary = said(_failed(site, op), f"it modifies in place one of the views {node} returned (split, chunk and unbind "
                   "return several views of one tensor), which autograd does not allow.")
    detail = ("The pieces share their base's memory; an in-place change of one of them would have to rewrite the "
              "backward of the others, so PyTorch forbids it.")
    fix = (f"use the out-of-place form (`<x> = <x>.{plain}()`" + (")" if plain else "") + ", or clone the piece first "
           "(`<x> = <x>.clone()`) before changing it in place." if plain else
           "use the out-of-place form of the op, or clone the piece first (`<x> = <x>.clone()`).")
    return summary, detail, fix


@words("raised_here.resize")
def resize_text(site, op, tensor, got):
    """raised_here (resize_requires_grad): ``resize_`` of a tensor that requires grad."""
    summary = said(_failed(site, op), f"resize_() changes the storage of {_named(tensor, 'a tensor')}, which requires "
                   "grad; autograd cannot follow it.")
    detail = "resize_ reallocates the tensor's memory in place; there is no gradient through it."
    fix = "use `<x>.reshape(...)`, `<x>.view(...)` or `<x>.flatten(...)`, which keep the graph."
    return summary, detail, fix


@words("raised_here.detach_view")
def detach_view_text(site, op, tensor, got):
    """raised_here (detach_view_inplace): ``detach_()`` of a view."""
    summary = said(_failed(site, op), f"detach_() was called on {_named(tensor, 'a view')}, a view of another tensor "
                   "(a slice or a piece of a hidden state); views cannot be detached in place.")
    detail = "Detaching a view in place would change its base's history too."
    fix = "use the out-of-place form: `<h> = <h>.detach()` (detach the whole state, or the piece you keep)."
    return summary, detail, fix


@words("raised_here.gradient_shape")
def gradient_shape_text(site, op, tensor, got):
    """raised_here (gradient_shape_mismatch): ``backward(gradient=g)`` with ``g`` of another shape."""
    k, gshape, oshape = (list(got) + ["?", "?", "?"])[:3]
    summary = said(_failed(site, op, "backward"), f"the gradient given for output {k} has shape {gshape}, but the "
                   f"output has shape {oshape}.")
    detail = "backward(gradient=g) needs one gradient of exactly the output's shape (the vector of a vector-Jacobian product)."
    fix = ("pass a gradient of the output's shape (`<out>.backward(torch.ones_like(<out>))`), or reduce the output to the "
           "scalar loss first (`<out>.sum().backward()`, `<out>.mean().backward()`).")
    return summary, detail, fix


@words("raised_here.gradient_count")
def gradient_count_text(site, op, tensor, got):
    """raised_here (gradient_count_mismatch): ``torch.autograd.backward(outputs, grads)`` with counts that differ."""
    n, g = (list(got) + ["?", "?"])[:2]
    summary = said(_failed(site, op, "backward"), f"it was given {n} outputs and {g} gradients: one gradient per "
                   "output is needed.")
    detail = "torch.autograd.backward pairs outputs and gradients one to one (None is allowed for a scalar output)."
    fix = ("pass one gradient per output (None for a scalar loss), or add the losses and call backward once "
           "(`(<a> + <b>).backward()`).")
    return summary, detail, fix


@words("raised_here.integer_requires_grad")
def integer_requires_grad_text(site, op, tensor, got):
    """raised_here (integer_requires_grad): requires_grad on an integer or bool tensor."""
    summary = said(_failed(site, op), f"{_named(tensor, 'the tensor')} holds integers (or bools), and only floating-"
                   "point and complex tensors can require grad.")
    detail = "There is no gradient with respect to an integer: ids, labels and masks are constants to autograd."
    fix = ("ask for the gradient of a float tensor computed from it instead: for token ids, their embeddings "
           "(`<e> = <embedding>(<ids>); <e>.retain_grad()`); for a mask, a float mask (`<mask>.float().requires_grad_()`).")
    return summary, detail, fix


@words("raised_here.non_leaf_flag")
def non_leaf_flag_text(site, op, tensor, got):
    """raised_here (requires_grad_non_leaf): requires_grad set on a computed tensor."""
    summary = said(_failed(site, op, "setting requires_grad"), f"{_named(tensor, 'the tensor')} is computed (not a "
                   "leaf), and requires_grad can only be changed on leaves.")
    detail = "A computed tensor requires grad because something it came from does; its flag follows its inputs."
    fix = ("to stop the gradient through it use `<h> = <h>.detach()`; to freeze a layer, set the flag on its parameters "
           "(`for p in <layer>.parameters(): p.requires_grad_(False)`).")
    return summary, detail, fix


@words("raised_here.mixed_hooks")
def mixed_hooks_text(site, op, tensor, got):
    """raised_here (mixed_backward_hooks): one module with both kinds of backward hook."""
    summary = said(_failed(site, op, "registering the hook"), "the module has a register_backward_hook hook and a "
                   "register_full_backward_hook hook; a module can use only one kind.")
    detail = "register_backward_hook is the old, deprecated kind; the two cannot be mixed on one module."
    fix = "register both with `<module>.register_full_backward_hook(...)` (the old kind also gives wrong grad_input for most modules)."
    return summary, detail, fix


@words("raised_here.grad_assignment")
def grad_assignment_text(site, op, tensor, got):
    """raised_here (grad_assignment_mismatch): ``p.grad = g`` with ``g`` of another size or dtype."""
    what = f"of size {got[0]}" if got and got[0][:1] == "[" else (f"of dtype {got[0]}" if got else "that does not match")
    summary = said(_failed(site, op, "the .grad assignment"), f"the gradient assigned is {what}, which does not "
                   "match the tensor it is assigned to.")
    detail = ".grad must have the shape and dtype of its tensor (optimizers update the tensor with it element by element)."
    fix = ("assign a gradient of the tensor's shape and dtype (`p.grad = g.to(p.dtype)`; when copying between models, "
           "pair the parameters by name and check their shapes).")
    return summary, detail, fix


@words("raised_here.parameter_assigned")
def parameter_assigned_text(site, op, tensor, got):
    """raised_here (parameter_assigned_tensor): a computed tensor assigned to a registered Parameter's attribute."""
    attr = got[1] if len(got) > 1 else "the parameter"
    summary = said(_failed(site, op, "the assignment"), f"`{attr}` is a registered nn.Parameter of the module, and "
                   "a computed tensor cannot take its place.")
    detail = ("An attribute that holds a Parameter accepts only a Parameter (or None): a computed tensor would drop it "
              "from parameters() and from the optimizer.")
    fix = (f"compute the value in forward and use it without storing it (`<w> = self.{attr} / self.{attr}.norm()`), use "
           f"`torch.nn.utils.parametrize`, or change it in place under `torch.no_grad()` (`self.{attr}.div_(...)`).")
    return summary, detail, fix


@words("raised_here.legacy_function")
def legacy_function_text(site, op, tensor, got):
    """raised_here (legacy_function): an autograd.Function with an instance ``forward``, called as ``Fn()(x)``."""
    summary = said(_failed(site, op, "the call"), "it calls an autograd.Function written the old way (an instance "
                   "with a non-static forward), which PyTorch no longer runs.")
    detail = "Custom autograd Functions define forward and backward as static methods and are called through .apply."
    fix = ("make forward and backward static methods taking the context first (`<ctx>.save_for_backward(...)` in forward) and "
           "call it as `<Fn>.apply(<x>)`, not `<Fn>()(<x>)`.")
    return summary, detail, fix


@words("raised_here.optimizer_params")
def optimizer_params_text(site, op, tensor, got):
    """raised_here (optimizer_params): an optimizer given modules or a single tensor."""
    given = got[0] if got else "something else"
    summary = said(_failed(site, op, "building the optimizer"), f"the optimizer was given {given} where it needs an "
                   "iterable of tensors (or of parameter-group dicts).")
    detail = "An optimizer holds tensors: a module is not one, and a single tensor is not a list of them."
    fix = ("pass the parameters: `torch.optim.Adam(<model>.parameters())`, several modules as "
           "`[*<a>.parameters(), *<b>.parameters()]`, one tensor as `[<w>]`.")
    return summary, detail, fix


@words("raised_here.backward_in_transform")
def backward_in_transform_text(site, op, tensor, got):
    """raised_here (backward_in_transform): ``backward()`` inside vmap/grad."""
    summary = said(_failed(site, op, "backward"), "backward() was called inside a torch.func transform (vmap, grad), "
                   "which does not support it.")
    detail = "Inside a transform, gradients are computed by the transform itself (torch.func.grad / vjp), not by .grad."
    fix = ("return the loss from the function and take its gradient with the transform: "
           "`torch.func.vmap(torch.func.grad(<loss_fn>))` (per-sample gradients); call backward() outside it.")
    return summary, detail, fix


@words("raised_here.item_in_transform")
def item_in_transform_text(site, op, tensor, got):
    """raised_here (item_in_transform): ``.item()`` inside vmap."""
    summary = said(_failed(site, op, "item"), ".item() was called inside vmap, where a tensor holds a batch of "
                   "values and has no single Python number.")
    detail = "vmap runs the function on all samples at once; a Python branch on one value cannot be batched."
    fix = ("keep it a tensor inside the function (`torch.where(<loss> > <limit>, <a>, <b>)` in place of `if <loss>.item() > <limit>:`), "
           "and log or branch outside vmap.")
    return summary, detail, fix


@words("raised_here.jit_constant")
def jit_constant_text(site, op, tensor, got):
    """raised_here (jit_constant_requires_grad): torch.jit.trace met a captured tensor that requires grad."""
    summary = said(_failed(site, op, "torch.jit.trace"), "the traced function uses a tensor that requires grad but "
                   "is neither an input nor a parameter, so the trace would freeze it as a constant.")
    detail = "A constant in a traced graph has no gradient; PyTorch refuses instead of silently cutting it."
    fix = ("pass the tensor as an input of the traced function, or hold it as an nn.Parameter of a module you trace; "
           "detach it if it is not meant to train.")
    return summary, detail, fix


# --- raised_upstream: raised at one line, caused at an earlier one ----------------------------------------------
def _raised_at(where) -> str:
    return f"it was raised{_at(where)}{_code(where)}"


@words("raised_upstream.nonscalar")
def nonscalar_text(site, where, loss, shape):
    """raised_upstream (nonscalar_backward): ``backward()`` of a result with more than one element."""
    summary = said(f"backward() on `{loss}` failed", f"`{loss}` holds {shape} values, not one: it was made"
                   f"{_at(site)}{_code(site)}, and backward() without gradient= needs a scalar ({_raised_at(where)}).")
    detail = "backward() starts from a gradient of 1 for a scalar; for a tensor it needs the gradient to start from."
    fix = ("reduce it to a scalar before backward (`.mean()` or `.sum()`, or drop reduction='none'), or pass "
           "`torch.ones_like(<loss>)` as gradient= if you want the sum of its gradients.")
    return summary, detail, fix


@words("raised_upstream.retain_grad")
def retain_grad_text(site, where, tensor, no_grad):
    """raised_upstream (retain_grad_no_grad): ``retain_grad()`` on a tensor that does not require grad."""
    summary = said(f"`{tensor}.retain_grad()` failed", f"`{tensor}` does not require grad: it was made"
                   f"{_at(site)}{_code(site)}" + (" with grad switched off" if no_grad else
                                                   " without requires_grad") + f" ({_raised_at(where)}).")
    detail = "Only a tensor that requires grad has a gradient to keep; an input batch does not unless you ask for it."
    fix = (f"call `{tensor}.requires_grad_()` before it is used (for a gradient with respect to the input, as in a "
           f"saliency map), or drop retain_grad() if no gradient is needed.")
    return summary, detail, fix


@words("raised_upstream.hook_no_grad")
def hook_no_grad_text(site, where, tensor, no_grad):
    """raised_upstream (hook_on_no_grad_tensor): ``register_hook`` on a tensor that does not require grad."""
    summary = said(f"`{tensor}.register_hook(...)` failed", f"`{tensor}` does not require grad: it was made"
                   f"{_at(site)}{_code(site)}" + (" (grad was switched off there)" if no_grad else "") +
                   f", so no gradient will ever reach a hook on it ({_raised_at(where)}).")
    detail = "A tensor hook runs when backward computes that tensor's gradient; a tensor without history never has one."
    fix = ("compute it with grad enabled (outside torch.no_grad() / inference_mode) if you need its gradient "
           "(Grad-CAM), or register the hook on a tensor that requires grad.")
    return summary, detail, fix


@words("raised_upstream.hook_changed")
def hook_changed_text(site, where, tensor, what):
    """raised_upstream (hook_changed_gradient): a tensor hook returned a gradient of another size or dtype."""
    kind = "size" if what == "size" else "dtype"
    on = f"`{tensor}`" if tensor else "its tensor"
    summary = said(f"backward failed{_at(where)}", f"the hook registered{_at(site)}{_code(site)} on {on} "
                   f"returned a gradient of another {kind} than {on} has.")
    detail = "A tensor hook may replace the gradient, but with one of the same shape and dtype as the tensor."
    fix = ("return a gradient of the same shape and dtype from the hook (`g * <mask>`, `g.clamp(-1, 1)`); reduce or "
           "convert it after backward, on .grad, if that is what you need.")
    return summary, detail, fix


@words("raised_upstream.grad_input")
def grad_input_text(site, where, tensor):
    """raised_upstream (input_not_requiring_grad): ``autograd.grad`` of a tensor that does not require grad."""
    summary = said(f"torch.autograd.grad failed{_at(where)}", f"`{tensor}` does not require grad: it was made"
                   f"{_at(site)}{_code(site)} without requires_grad, so it has no gradient to return.")
    detail = "autograd.grad differentiates with respect to tensors that require grad and are part of the graph."
    fix = (f"call `{tensor}.requires_grad_()` before the forward that uses it (an input-gradient penalty needs it), "
           "or leave it out of the inputs.")
    return summary, detail, fix


@words("raised_upstream.reentrant_grad")
def reentrant_grad_text(site, where):
    """raised_upstream (reentrant_checkpoint): ``autograd.grad`` through a reentrant checkpoint."""
    summary = said(f"torch.autograd.grad failed{_at(where)}", f"the block checkpointed{_at(site)}{_code(site)} "
                   "with use_reentrant=True cannot be differentiated by torch.autograd.grad.")
    detail = "A reentrant checkpoint runs its own backward inside .backward(); autograd.grad cannot call into it."
    fix = "pass use_reentrant=False to checkpoint (the default to prefer), which supports torch.autograd.grad."
    return summary, detail, fix


@words("raised_upstream.recompute_mismatch")
def recompute_mismatch_text(site, where):
    """raised_upstream (checkpoint_recompute_mismatch): a checkpointed block recomputed differently in backward."""
    summary = said(f"backward failed{_at(where)}", f"the block checkpointed{_at(site)}{_code(site)} computed "
                   "something else when backward recomputed it than in the forward (another branch, other shapes or "
                   "dtypes).")
    detail = ("checkpoint() reruns the block during backward and expects the same operations; a branch on Python "
              "state (a call counter, a random choice, a flag flipped by the first run) changes them.")
    fix = ("make the checkpointed function depend only on its tensor inputs (move counters and flags out, seed random "
           "choices), or compute that part outside checkpoint.")
    return summary, detail, fix


@words("raised_upstream.ddp_marked_twice")
def ddp_marked_twice_text(site, where):
    """raised_upstream (ddp_marked_twice): DDP saw a parameter's gradient ready twice (reentrant checkpoint)."""
    summary = said(f"backward failed{_at(where)}", f"DistributedDataParallel saw a parameter's gradient become ready "
                   f"twice in one backward: the block checkpointed{_at(site)}{_code(site)} with use_reentrant=True "
                   "runs its backward (and DDP's hooks) once per use.")
    detail = ("With find_unused_parameters=True (or a block used twice), a reentrant checkpoint makes DDP's reducer "
              "see the same parameter more than once in one backward.")
    fix = ("pass use_reentrant=False to checkpoint, or construct DDP with static_graph=True if the graph is the same "
           "every step.")
    return summary, detail, fix


@words("raised_upstream.dtype")
def dtype_text(site, where, tensor, got, want):
    """raised_upstream (dtype_mismatch): a tensor of another dtype than the model's met it in a call."""
    summary = said(f"the call{_at(where)} failed", f"`{tensor}` is {got}, made{_at(site)}{_code(site)}, and met "
                   f"{want} values there (NumPy arrays are float64 by default).")
    detail = "Losses and layers take tensors of one floating dtype; torch does not convert a float64 target for you."
    fix = (f"make it {want} where it is made (`.float()`, or `torch.from_numpy(<array>.astype(<dtype>))`), or convert "
           "the model's output to match.")
    return summary, detail, fix


@words("raised_upstream.no_grad_view")
def no_grad_view_text(site, where, tensor):
    """raised_upstream (no_grad_view_inplace): a view made under no_grad written in place with grad on."""
    summary = said(f"the in-place write{_at(where)} failed", f"`{tensor}` is a view taken under no_grad"
                   f"{_at(site)}{_code(site)} of a tensor that requires grad, and it was written in place with grad on.")
    detail = ("autograd cannot record an in-place write into a view whose creation it did not record: the base's "
              "history would be wrong.")
    fix = ("take the view with grad on (outside the no_grad block), or write it under torch.no_grad() too; to "
           "change the weights by hand, write into the base under torch.no_grad().")
    return summary, detail, fix


@words("raised_upstream.expanded")
def expanded_text(site, where, tensor):
    """raised_upstream (inplace_on_expanded): an in-place write into a tensor made by expand (shared memory)."""
    summary = said(f"the in-place write{_at(where)} failed", f"`{tensor}` was made by expanding a smaller tensor"
                   f"{_at(site)}{_code(site)}, so its elements share memory and one write would land in several.")
    detail = ("expand() returns a view whose repeated elements are one memory location; autograd (and torch) refuse "
              "an in-place write into it.")
    fix = ("write out of place (`<x> = <x> + ...`), or make a real tensor where it is made (`.expand(...).clone()`, "
           "`.repeat(...)`, or `torch.zeros(<full shape>)`).")
    return summary, detail, fix


@words("raised_upstream.two_groups")
def two_groups_text(site, where, groups):
    """raised_upstream (param_in_two_groups): parameter groups that list one parameter twice."""
    summary = said(f"the optimizer{_at(where)} refused its parameter groups",
                   f"`{groups}`{_at(site)}{_code(site)} lists some parameters in two groups (a part's own group, "
                   f"and again in the whole model's parameters()).")
    detail = "Each parameter may belong to one group only; the optimizer cannot tell which learning rate it should get."
    fix = ("give the second group only the parameters not in the first (e.g. `[p for n, p in <model>.named_parameters() "
           "if not n.startswith(<prefix>)]`), or build the groups from disjoint submodules.")
    return summary, detail, fix


@words("raised_upstream.non_leaf_param")
def non_leaf_param_text(site, where, tensor, op):
    """raised_upstream (optimize_non_leaf): an optimizer given a tensor computed from a leaf (`.double()`, `.to()`)."""
    summary = said(f"the optimizer{_at(where)} failed",
                   f"`{tensor}` is not a leaf: {op}{_at(site)}{_code(site)} computed it from the tensor that requires "
                   f"grad, so its .grad is never filled and an optimizer cannot step it.")
    detail = ("requires_grad=True before a .double()/.to()/.cuda() marks the original as the leaf; the result is a "
              "computed copy.")
    fix = ("create the tensor with its final dtype and device and requires_grad=True in one call (`torch.randn(<shape>)` "
           "with dtype, device and requires_grad=True given in that one call), or call `.requires_grad_()` after the conversion.")
    return summary, detail, fix


@words("raised_upstream.func_nonscalar")
def func_nonscalar_text(site, where, result, shape):
    """raised_upstream (nonscalar_backward): torch.func.grad of a function that returns more than one element."""
    summary = said(f"torch.func.grad{_at(where)} failed", f"the function returns `{result}`, which holds {shape} "
                   f"values, made{_at(site)}{_code(site)}; grad() differentiates a function with one scalar output.")
    detail = "torch.func.grad needs f(*args) to return a scalar; for a vector output use vjp or jacrev."
    fix = ("reduce the result to a scalar there (`.mean()` or `.sum()`, or drop reduction='none'), or use "
           "torch.func.vjp / torch.func.jacrev for the gradient of each element.")
    return summary, detail, fix


@words("raised_upstream.hooked_inplace")
def hooked_inplace_text(site, where, module, op):
    """raised_upstream (backward_hook_inplace): an in-place op on a hooked module's output."""
    summary = said(f"the forward{_at(where)} failed", f"`{module}` runs {op} in place{_at(site)}{_code(site)} on "
                   "the output of a module that has a full backward hook (register_full_backward_hook), which "
                   "autograd must keep unchanged.")
    detail = ("A full backward hook wraps the module's outputs in a view made by a custom Function; writing into that "
              "view in place is not allowed (Grad-CAM hooks before ReLU(inplace=True)).")
    fix = "use the out-of-place version (inplace=False, `torch.relu(<x>)`), or hook the module after the in-place one."
    return summary, detail, fix


@words("raised_upstream.deepcopy")
def deepcopy_text(site, where, how, attr):
    """raised_upstream (deepcopy_non_leaf): copy.deepcopy of a module that holds a tensor with history."""
    if how == "weight_norm":
        said_why = (f"the module uses the old torch.nn.utils.weight_norm, applied{_at(site)}{_code(site)}: after a "
                    "forward its weight is a computed tensor, and deepcopy copies only leaves.")
        fix = ("use torch.nn.utils.parametrizations.weight_norm (it deep-copies), or deepcopy before the first forward.")
    else:
        said_why = (f"the module keeps a computed tensor as `self.{attr}`{_at(site)}{_code(site)}; it carries "
                    "history, and deepcopy copies only leaves.")
        fix = (f"store it detached (`self.{attr} = <value>.detach()`), or clear it before copying the model.")
    summary = said(f"copy.deepcopy{_at(where)} failed", said_why)
    detail = "Tensors with a grad_fn cannot be deep-copied; a model's attributes are copied with it (an EMA copy)."
    return summary, detail, fix


@words("raised_upstream.save_non_tensor")
def save_non_tensor_text(site, where, fn, index, kind):
    """raised_upstream (save_for_backward_non_tensor): save_for_backward given a Python value."""
    summary = said(f"the call{_at(where)} failed", f"{fn}.forward passes a Python {kind} (argument {index}) to "
                   f"ctx.save_for_backward{_at(site)}{_code(site)}, which saves tensors only.")
    detail = "save_for_backward keeps tensors (and None) for backward, checking their versions; other values it refuses."
    fix = ("keep Python values as attributes of ctx (set them in forward, read them in backward) and pass only "
           "tensors to ctx.save_for_backward.")
    return summary, detail, fix


@words("raised_upstream.inference_tensor")
def inference_tensor_text(site, where, tensor):
    """raised_upstream (inference_mode): a tensor made under inference_mode changed or made trainable outside it."""
    summary = said(f"the call{_at(where)} failed", f"`{tensor}` was made under torch.inference_mode()"
                   f"{_at(site)}{_code(site)}: an inference tensor cannot be written in place or made to require grad "
                   f"outside that mode.")
    detail = "Inference tensors carry no version counter and no autograd metadata; training needs ordinary tensors."
    fix = ("build or load what will be trained outside inference_mode (torch.no_grad() keeps it cheap), or clone it "
           "outside the mode (`<t>.clone()`) before training it.")
    return summary, detail, fix


@words("raised_upstream.clip_nonfinite")
def clip_nonfinite_text(site, where, op):
    """raised_upstream (nonfinite_gradient): clip_grad_norm_ met a non-finite gradient."""
    summary = said(f"clip_grad_norm_{_at(where)} failed", f"the gradients are not finite: the inf/nan entered the "
                   f"forward at {op}(){_at(site)}{_code(site)}.")
    detail = "error_if_nonfinite=True stops on an inf/nan total norm; the value went wrong in the forward before it."
    fix = ("keep the values in range where they enter (scale the inputs, clamp, a stable form such as log_softmax), "
           "and skip or shrink the step when the norm is not finite instead of stopping.")
    return summary, detail, fix
