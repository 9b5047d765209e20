"""The catalogue of PyTorch's autograd errors (docs/errors.md, issue 20): one row per message, each with a
trigger from realistic user code (tests/error_triggers.py).

Per row:
(a) the trigger raises (or warns) a message matching the row's pattern, plain and under `gradscope.trace()`
    (tracing must not change the error);
(b) gradscope's explanation -- `tr.failure`, or `tr.why(...)` where the message is a warning or a
    gradient goes missing -- has the row's cause, at the line of the trigger marked `# <- cause`.

Where gradscope does not explain a row right today, (b) is `xfail(strict=True)` with the reason: the
table (docs/errors.md, column "gradscope today") and these marks agree; a new rule that explains the row
turns its xfail into a failure (XPASS) until the mark is removed. The causes of xfail rows are the names a
rule for them should give (proposals; no rule has them yet).
"""
from __future__ import annotations

import inspect
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import gradscope

import error_triggers as T


@dataclass(frozen=True)
class Row:
    trigger: str  # function name in tests/error_triggers.py
    pattern: str  # regex the message matches (re.search)
    cause: str  # the cause gradscope should give
    kind: str = "raises"  # "raises": an exception; "warns": a warning, then tr.why(returned tensor)
    exc: type = RuntimeError
    todo: str = ""  # non-empty: (b) fails today, the reason (an xfail)
    marker: str = "# <- cause"  # the comment that ends the line of the cause
    when: str = ""  # when it happens, one line (docs/errors.md)

    def __str__(self):
        return self.trigger


NO_RULE = "no rule yet: gradscope answers 'unknown' at the line that raised"

ROWS = [
    # --- in-place writes on leaves and views
    Row("leaf_inplace_init", r"a leaf Variable that requires grad is being used in an in-place operation",
        "leaf_inplace",
        when='an in-place op (`normal_`, `fill_`, `zero_`, `+=`) on a parameter or leaf that requires grad, with grad mode on (an initialisation outside `torch.no_grad()`)'),
    Row("leaf_inplace_manual_sgd", r"a leaf Variable that requires grad is being used in an in-place operation",
        "leaf_inplace",
        when='a hand-written update `w -= lr * w.grad` outside `torch.no_grad()`'),
    Row("view_of_leaf_inplace", r"a view of a leaf Variable that requires grad is being used in an in-place",
        "leaf_inplace",
        when='slice assignment `w[i] = v` (an in-place write into a view) on a leaf that requires grad'),
    Row("view_of_leaf_inplace_column", r"a view of a leaf Variable that requires grad is being used in an in-place",
        "leaf_inplace",
        when='an in-place op on a slice of a parameter (`w[:, 0].zero_()`)'),
    Row("out_argument", r"functions with out=\.\.\. arguments don't support automatic differentiation",
        "out_argument",
        when='`out=` given to an op whose inputs require grad (a preallocated buffer)'),
    Row("out_argument_add", r"functions with out=\.\.\. arguments don't support automatic differentiation",
        "out_argument",
        when='`torch.add(a, b, out=a)` as a running sum with inputs that require grad'),
    Row("split_view_inplace", r"Output \d+ of \w+ is a view and is being modified inplace\. This view is the "
        r"output of a function that returns multiple views", "multi_output_view_inplace",
        when='an in-place op on one output of `split`/`chunk` (a multi-output view op)'),
    Row("unbind_view_inplace", r"Output \d+ of \w+ is a view and is being modified inplace\. This view is the "
        r"output of a function that returns multiple views", "multi_output_view_inplace",
        when='an in-place op on a row from `unbind` (or iterating over a tensor)'),
    Row("view_from_no_grad_inplace", r"A view was created in no_grad mode and is being modified inplace with "
        r"grad mode enabled", "no_grad_view_inplace",
        when='a view taken under `no_grad` of a tensor that requires grad, written in place later with grad on'),
    Row("full_backward_hook_inplace_relu", r"Output \d+ of BackwardHookFunction\w* is a view and is being "
        r"modified inplace\. This view was created inside a custom Function", "backward_hook_inplace",
        when='`register_full_backward_hook` on a module whose output is then modified in place (`ReLU(inplace=True)`)'),
    Row("inplace_saved_tensor", r"one of the variables needed for gradient computation has been modified by "
        r"an inplace operation", "inplace_saved_tensor",
        when='an in-place write into a tensor that an earlier op saved for backward'),
    Row("gan_step_before_generator_backward", r"one of the variables needed for gradient computation has been "
        r"modified by an inplace operation", "inplace_saved_tensor",
        when="`optimizer.step()` writes weights that a graph still to be backwarded saved (GAN: D's step before G's backward)"),
    Row("inplace_relu_after_sigmoid", r"one of the variables needed for gradient computation has been modified "
        r"by an inplace operation", "inplace_saved_tensor",
        when="`nn.ReLU(inplace=True)` (or `relu_`) on the output of an op that saved it (`sigmoid`, `tanh`, `exp`)"),
    Row("expanded_inplace", r"more than one element of the written-to tensor refers to a single memory location",
        "inplace_on_expanded",
        when='an in-place write into an `expand`ed tensor (several elements share memory)'),
    Row("resize_requires_grad", r"cannot resize variables that require grad", "resize_requires_grad",
        when='`resize_` on a tensor that requires grad'),
    Row("detach_view_inplace", r"Can't detach views in-place\. Use detach\(\) instead", "detach_view_inplace",
        when='`detach_()` on a view (a slice of an output; or a DDP gradient bucket view)'),
    # --- backward() and autograd.grad calls
    Row("nonscalar_backward", r"grad can be implicitly created only for (real )?scalar outputs",
        "nonscalar_backward",
        when="`backward()` without `gradient=` on a tensor of more than one element (`reduction='none'`)"),
    Row("no_grad_fn_eval", r"element 0 of tensors does not require grad and does not have a grad_fn",
        "no_grad_block",
        when='`backward()` on a loss computed under `no_grad` (an evaluation helper)'),
    Row("no_grad_fn_rewrapped", r"element 0 of tensors does not require grad and does not have a grad_fn",
        "item_roundtrip",
        when='`backward()` on a loss rebuilt from Python numbers (`.item()` then `torch.tensor`)'),
    Row("backward_twice_rnn_hidden", r"Trying to backward through the graph a second time", "backward_twice",
        when='a second backward through a graph already freed (a hidden state carried across steps without `detach()`)'),
    Row("no_grad_fn_frozen", r"element 0 of tensors does not require grad and does not have a grad_fn",
        "frozen_param",
        when="`backward()` when every parameter on the loss's path is frozen (the new head frozen with the backbone)"),
    Row("backward_twice_two_losses", r"Trying to backward through the graph a second time", "backward_twice",
        when="two losses over a shared trunk, each with its own `backward()` (the first frees the trunk's graph)"),
    Row("backward_twice_cached_outside_loop", r"Trying to backward through the graph a second time",
        "backward_twice",
        when="a tensor computed once before the training loop (prototypes, an embedding) and used by every step"),
    Row("gradient_penalty_without_create_graph", r"element 0 of tensors does not require grad and does not have "
        r"a grad_fn", "autograd_grad_not_backward",
        when="a loss built from `autograd.grad` results taken without `create_graph=True` (a gradient penalty)"),
    Row("backward_inputs_empty", r"`inputs` argument to `backward\(\)` cannot be empty", "unregistered_container",
        marker="# <- cause: plain list",
        when="`backward(inputs=...)` given an empty list (`model.parameters()` of layers in a plain list)"),
    Row("grad_shape_mismatch", r"Mismatch in shape: grad_output\[\d+\] has a shape of .* and output\[\d+\] has "
        r"a shape of", "gradient_shape_mismatch",
        when='`backward(gradient=g)` / `autograd.grad(grad_outputs=)` with `g` of another shape than the output'),
    Row("grad_count_mismatch", r"got \d+ tensors and \d+ gradients", "gradient_count_mismatch",
        when='`autograd.backward(tensors, grad_tensors)` with lists of different lengths'),
    Row("autograd_grad_input_not_required", r"One of the differentiated Tensors does not require grad",
        "input_not_requiring_grad",
        when='`autograd.grad(out, x)` where `x` does not require grad'),
    Row("autograd_grad_unused", r"appears to not have been used in the graph\. Set allow_unused=True",
        "unused_parameter",
        when='`autograd.grad(out, inputs)` where an input is not on the graph of `out`'),
    Row("dtype_mismatch_bce", r"Found dtype \w+ but expected \w+", "dtype_mismatch",
        when='a loss (BCE) given a float64 target and float32 input (a target from NumPy)'),
    Row("no_derivative", r"the derivative for .* is not implemented", "nondifferentiable_op",
        exc=NotImplementedError,
        when="backward through an op with no derivative for one of its inputs (`gammainc`'s shape, `zeta`)"),
    Row("numpy_of_grad_tensor", r"Can't call numpy\(\) on Tensor that requires grad", "numpy_roundtrip",
        when='`.numpy()` on a tensor that requires grad (logging inside the step)'),
    # --- requires_grad, retain_grad, hooks, .grad
    Row("requires_grad_integer", r"only Tensors of floating point (and complex )?dtype can require gradients",
        "integer_requires_grad",
        when='`requires_grad_()` / `requires_grad=True` on an integer or bool tensor'),
    Row("requires_grad_nonleaf", r"you can only change requires_grad flags of leaf variables",
        "requires_grad_non_leaf",
        when='`t.requires_grad = False` on a computed (non-leaf) tensor'),
    Row("retain_grad_no_grad", r"can't retain_grad on Tensor that has requires_grad=False",
        "retain_grad_no_grad",
        when='`retain_grad()` on a tensor that does not require grad'),
    Row("hook_no_grad", r"cannot register a hook on a tensor that doesn't require gradient",
        "hook_on_no_grad_tensor",
        when='`register_hook` on a tensor that does not require grad (computed under `no_grad`)'),
    Row("hook_changed_size", r"hook '.*' has changed the size of value", "hook_changed_gradient",
        when='a tensor hook returned a gradient of another shape'),
    Row("hook_changed_dtype", r"hook '.*' has changed the type of value", "hook_changed_gradient",
        when='a tensor hook returned a gradient of another dtype'),
    Row("both_backward_hooks", r"Cannot use both regular backward hooks and full backward hooks on a single Module",
        "mixed_backward_hooks",
        when="`register_backward_hook` and `register_full_backward_hook` on the same module"),
    Row("grad_assign_wrong_size", r"attempting to assign a gradient of size .* to a tensor of size",
        "grad_assignment_mismatch",
        when='`p.grad = g` with `g` of another shape'),
    Row("grad_assign_wrong_dtype", r"attempting to assign a gradient with dtype .* to a tensor with grad_dtype",
        "grad_assignment_mismatch",
        when='`p.grad = g` with `g` of another dtype'),
    Row("param_assign_tensor", r"cannot assign '[\w.]+' as parameter '\w+' \(torch\.nn\.Parameter or None "
        r"expected\)", "parameter_assigned_tensor", exc=TypeError,
        when='assigning a plain tensor to a module attribute that is a Parameter (`self.weight = ...`)'),
    Row("weight_norm_deepcopy", r"Only Tensors created explicitly by the user \(graph leaves\) support the "
        r"deepcopy protocol", "deepcopy_non_leaf",
        when="`copy.deepcopy` of a module with the old `nn.utils.weight_norm` after a forward (its weight is computed)"),
    Row("deepcopy_nonleaf", r"Only Tensors created explicitly by the user \(graph leaves\) support the deepcopy "
        r"protocol", "deepcopy_non_leaf",
        when='`copy.deepcopy` of a module (or object) holding a computed, non-leaf tensor'),
    Row("nonleaf_grad_access", r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed",
        "non_leaf_no_retain_grad", kind="warns",
        when='(warning) reading `.grad` of a non-leaf tensor that has no `retain_grad()`'),
    Row("scalar_of_requires_grad", r"Converting a tensor with requires_grad=True to a scalar may lead to "
        r"unexpected behavior", "item_roundtrip", kind="warns",
        when='(warning) `float(t)` / `int(t)` on a tensor that requires grad'),
    Row("create_graph_backward", r"Using backward\(\) with create_graph=True will create a reference cycle",
        "ok", kind="warns",
        when='(warning) `backward(create_graph=True)` makes a reference cycle parameter <-> grad (the gradient is '
             'right: `ok`, with the backward named)'),
    Row("non_full_backward_hook", r"Using a non-full backward hook when the forward contains multiple autograd "
        r"Nodes is deprecated", "ok", kind="warns",
        when='(warning) `register_backward_hook` on a module whose forward has several autograd nodes (the gradient '
             'is right: `ok`, with the hook named)'),
    # --- custom autograd.Function
    Row("legacy_function", r"Legacy autograd function with non-static forward method is deprecated",
        "legacy_function",
        when='an `autograd.Function` with an instance `forward`, called as `Fn()(x)`'),
    Row("function_wrong_grad_count", r"returned an incorrect number of gradients \(expected \d+, got \d+\)",
        "custom_function",
        when="a custom Function's backward returns more or fewer gradients than forward had inputs"),
    Row("function_wrong_grad_shape", r"returned an invalid gradient at index \d+ - got .* but expected shape "
        r"compatible with", "custom_function",
        when="a custom Function's backward returns a gradient of the wrong shape"),
    Row("save_for_backward_non_tensor", r"save_for_backward can only save variables, but argument \d+ is of type",
        "save_for_backward_non_tensor", exc=TypeError,
        when='`ctx.save_for_backward` given a non-tensor (a float, None is allowed)'),
    Row("once_differentiable_double_backward", r"trying to differentiate twice a function that was marked with "
        r"@once_differentiable", "custom_function",
        when='double backward (gradient penalty, `create_graph=True`) through a `@once_differentiable` backward'),
    # --- inference mode
    Row("inference_tensor_saved", r"Inference tensors cannot be saved for backward", "inference_mode",
        when='a tensor made under `inference_mode` is saved for backward by a trainable op'),
    Row("inference_tensor_inplace", r"Inplace update to inference tensor outside InferenceMode is not allowed",
        "inference_mode",
        when='an in-place update (BatchNorm statistics, an optimizer) of a tensor made under `inference_mode`'),
    Row("inference_tensor_requires_grad", r"Setting requires_grad=True on inference tensor outside InferenceMode "
        r"is not allowed", "inference_mode",
        when='`requires_grad_()` on a tensor made under `inference_mode`'),
    # --- optimizers, containers, clipping, anomaly mode, DDP
    Row("empty_parameter_list", r"optimizer got an empty parameter list", "unregistered_container", exc=ValueError,
        marker="# <- cause: plain list",
        when='an optimizer built over `model.parameters()` that yields nothing (layers in a plain list)'),
    Row("list_layers_dtype_mismatch", r"mat1 and mat2 must have the same dtype", "unregistered_container",
        marker="# <- cause: plain list",
        when='a dtype (or device) mismatch in a layer that `.double()`/`.to()` never saw (layers in a plain list)'),
    Row("dict_layers_not_optimized", r"", "unregistered_container", kind="why", marker="# <- cause: plain dict",
        when='(no message) layers in a plain dict get gradients but no optimizer holds them'),
    Row("list_layers_device_mismatch", r"is not on the expected device|Expected all tensors to be on the same "
        r"device", "unregistered_container", marker="# <- cause: plain list",
        when="a device mismatch in a layer that `.to(device)` never moved (layers in a plain list)"),
    Row("param_in_two_groups", r"some parameters appear in more than one parameter group", "param_in_two_groups",
        exc=ValueError,
        when="optimizer parameter groups that overlap (a backbone group plus `model.parameters()`)"),
    Row("optimizer_given_modules", r"optimizer can only optimize Tensors, but one of the params is", "optimizer_params",
        exc=TypeError, when="an optimizer given modules (`[model.fc1, model.fc2]`) instead of parameters"),
    Row("optimizer_given_tensor", r"params argument given to the optimizer should be an iterable of Tensors or "
        r"dicts", "optimizer_params", exc=TypeError,
        when="an optimizer given one tensor instead of an iterable of them"),
    Row("clip_empty_generator", r"`parameters` is an empty generator, no gradient clipping will occur",
        "unregistered_container", kind="warns", marker="# <- cause: plain list",
        when="(warning) `clip_grad_norm_(model.parameters())` where `parameters()` yields nothing (a plain list)"),
    Row("optimize_non_leaf", r"can't optimize a non-leaf Tensor", "optimize_non_leaf", exc=ValueError,
        when='an optimizer given a computed tensor (`torch.randn(..., requires_grad=True).double()`)'),
    Row("clip_nonfinite", r"The total norm of order [\d.]+ for gradients from `parameters` is non-finite",
        "nonfinite_gradient",
        when='`clip_grad_norm_(..., error_if_nonfinite=True)` with an inf/NaN gradient'),
    Row("anomaly_nan", r"Function '\w+' returned nan values in its \d+th output", "nonfinite_gradient",
        when='under `detect_anomaly()`, a backward node returned NaN (`sqrt` at 0, 0/0)'),
    Row("ddp_unused_parameter", r"Expected to have finished reduction in the prior iteration before starting a "
        r"new one", "unused_parameter",
        when='DDP: a parameter got no gradient in the previous iteration (an unused head) and `find_unused_parameters=False`'),
    Row("ddp_shared_block_checkpointed_twice", r"Expected to mark a variable ready only once", "ddp_marked_twice",
        when="DDP: a parameter's gradient is ready twice in one backward (a shared block under reentrant "
             "checkpoint with find_unused_parameters=True, or a parameter used outside forward)"),
    # --- checkpoint
    Row("checkpoint_reentrant_autograd_grad", r"When use_reentrant=True, torch\.utils\.checkpoint is incompatible "
        r"with \.grad\(\)", "reentrant_checkpoint",
        when='`autograd.grad` (or `backward(inputs=)`) through `checkpoint(use_reentrant=True)`'),
    Row("checkpoint_reentrant_no_input_grad", r"None of the inputs have requires_grad=True\. Gradients will be None",
        "reentrant_checkpoint", kind="warns",
        when='(warning) `checkpoint(use_reentrant=True)` with no input requiring grad: its parameters get no gradient'),
    Row("checkpoint_no_use_reentrant", r"the use_reentrant parameter should be passed explicitly",
        "reentrant_checkpoint", kind="warns",
        when='(warning) `checkpoint` without `use_reentrant` (the reentrant default)'),
    Row("checkpoint_nondeterministic", r"torch\.utils\.checkpoint: A different number of tensors was saved during "
        r"the original forward and recomputation", "checkpoint_recompute_mismatch",
        exc=torch.utils.checkpoint.CheckpointError,
        when='`checkpoint(use_reentrant=False)` whose recomputation saves other tensors than the forward (a branch on Python state)'),
    # --- torch.func, jit
    Row("backward_in_functorch", r"backward\(\) called inside a functorch transform", "backward_in_transform",
        when='`.backward()` inside `vmap`/`grad` (torch.func)'),
    Row("item_in_vmap", r"vmap: It looks like you're calling \.item\(\) on a Tensor", "item_in_transform",
        when='`.item()` (or data-dependent control flow) inside `vmap`'),
    Row("func_grad_nonscalar", r"Expected f\(\*args\) to return a scalar Tensor, got tensor with \d+ dims",
        "nonscalar_backward",
        when='`torch.func.grad(f)` where `f` returns a non-scalar'),
    Row("jit_trace_constant", r"Cannot insert a Tensor that requires grad as a constant", "jit_constant_requires_grad",
        when='`torch.jit.trace` of code that closes over a tensor requiring grad'),
]

_SRC = Path(T.__file__).read_text().splitlines()


def cause_line(row: Row) -> int:
    """The line of error_triggers.py that ends with the row's marker: inside the trigger, or (a named
    marker) anywhere in the module."""
    fn = getattr(T, row.trigger)
    if row.marker == "# <- cause":
        lines, start = inspect.getsourcelines(fn)
        hits = [start + i for i, ln in enumerate(lines) if ln.rstrip().endswith(row.marker)]
    else:
        hits = [i for i, ln in enumerate(_SRC, 1) if ln.rstrip().endswith(row.marker)]
    assert len(hits) == 1, (row.trigger, hits)
    return hits[0]


@pytest.fixture(autouse=True)
def _warn_always():
    """Some messages are TORCH_WARN_ONCE: make every run warn (and restore)."""
    old = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    yield
    torch.set_warn_always(old)


def run(row: Row, traced: bool):
    """Run the trigger (under a trace when asked): (message, returned value, trace)."""
    fn = getattr(T, row.trigger)
    tr = None
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            if traced:
                with gradscope.trace() as tr:
                    ret = fn()
            else:
                ret = fn()
        except Exception as e:  # noqa: BLE001 (the error is what is checked)
            return e, None, tr
    return [w.message for w in ws], ret, tr


@pytest.mark.parametrize("traced", [False, True], ids=["plain", "traced"])
@pytest.mark.parametrize("row", ROWS, ids=str)
def test_trigger_raises_the_message(row, traced):
    got, ret, _ = run(row, traced)
    if row.kind == "raises":
        assert isinstance(got, row.exc), (type(got), got)
        assert re.search(row.pattern, str(got), re.S), str(got)
    elif row.kind == "warns":
        assert not isinstance(got, BaseException), got
        assert any(re.search(row.pattern, str(w), re.S) for w in got), [str(w)[:80] for w in got]
        assert isinstance(ret, torch.Tensor)
    else:  # a gradient question, no message
        assert not isinstance(got, BaseException), got
        assert isinstance(ret, torch.Tensor)


def _explained(row):
    marks = [pytest.mark.xfail(strict=True, reason=row.todo)] if row.todo else []
    return pytest.param(row, marks=marks, id=row.trigger)


@pytest.mark.parametrize("row", [_explained(r) for r in ROWS])
def test_gradscope_names_cause_and_line(row):
    _, ret, tr = run(row, traced=True)
    exp = tr.failure if row.kind == "raises" else tr.why(ret)
    assert exp is not None
    assert exp.cause == row.cause, exp
    assert exp.site is not None and Path(exp.site.filename).name == "error_triggers.py", exp
    assert exp.site.lineno == cause_line(row), exp
    assert exp.fix and "see the error message" not in exp.fix, exp


def test_every_trigger_has_a_row_and_every_row_a_trigger():
    triggers = {n for n, f in vars(T).items()
                if inspect.isfunction(f) and f.__module__ == T.__name__ and not n.startswith("_")}
    rows = [r.trigger for r in ROWS]
    assert len(rows) == len(set(rows))
    assert set(rows) == triggers


def test_the_table_in_docs_lists_every_row_with_its_verdict():
    doc = (Path(__file__).parent.parent / "docs" / "errors.md").read_text()
    for r in ROWS:
        line = next((ln for ln in doc.splitlines() if f"`{r.trigger}`" in ln and ln.startswith("|")), None)
        assert line is not None, r.trigger
        assert ("| no |" in line) == bool(r.todo), (r.trigger, line)
