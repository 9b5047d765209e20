"""The errors PyTorch raises at the line that is their cause (status `failure`): an in-place write into a leaf, an
``out=`` argument with grad, ``resize_`` of a tensor that requires grad, a gradient of the wrong shape passed to
``backward``, an optimizer given modules ... The message says what happened; the line that raised it is where, and
its fix is the message's own. One rule, :func:`raised_here`, over the table :data:`RAISED`; its wording is one
function per form in :mod:`.templates_raised`."""
from __future__ import annotations

import re

from ..core.model import Cause
from . import templates_raised as say  # noqa: F401  (registers the wording the findings here name)
from .common import _opname
from .finding import found
from .registry import rule

#: message pattern -> (cause, the wording form); the first that matches decides
RAISED = tuple((re.compile(p, re.S), c, f) for p, c, f in (
    (r"a view of a leaf Variable that requires grad is being used in an in-place", Cause.LEAF_INPLACE, "leaf_view"),
    (r"a leaf Variable that requires grad is being used in an in-place", Cause.LEAF_INPLACE, "leaf"),
    (r"(\w+)\(\): functions with out=\.\.\. arguments don't support automatic differentiation",
     Cause.OUT_ARGUMENT, "out_argument"),
    (r"Output \d+ of (\w+) is a view and is being modified inplace\. This view is the output of a function that "
     r"returns multiple views", Cause.MULTI_OUTPUT_VIEW_INPLACE, "multi_output_view"),
    (r"cannot resize variables that require grad", Cause.RESIZE_REQUIRES_GRAD, "resize"),
    (r"Can't detach views in-place", Cause.DETACH_VIEW_INPLACE, "detach_view"),
    (r"Mismatch in shape: grad_output\[(\d+)\] has a shape of torch\.Size\((\[[\d, ]*\])\) and output\[\d+\] has a "
     r"shape of torch\.Size\((\[[\d, ]*\])\)", Cause.GRADIENT_SHAPE_MISMATCH, "gradient_shape"),
    (r"got (\d+) tensors and (\d+) gradients", Cause.GRADIENT_COUNT_MISMATCH, "gradient_count"),
    (r"only Tensors of floating point (?:and complex )?dtype can require gradients", Cause.INTEGER_REQUIRES_GRAD,
     "integer_requires_grad"),
    (r"you can only change requires_grad flags of leaf variables", Cause.REQUIRES_GRAD_NON_LEAF, "non_leaf_flag"),
    (r"Cannot use both regular backward hooks and full backward hooks", Cause.MIXED_BACKWARD_HOOKS, "mixed_hooks"),
    (r"attempting to assign a gradient (?:of size '([^']*)'|with dtype '([^']*)') to a tensor",
     Cause.GRAD_ASSIGNMENT_MISMATCH, "grad_assignment"),
    (r"cannot assign '([\w.]+)' as parameter '(\w+)' \(torch\.nn\.Parameter or None expected\)",
     Cause.PARAMETER_ASSIGNED_TENSOR, "parameter_assigned"),
    (r"Legacy autograd function with non-static forward method", Cause.LEGACY_FUNCTION, "legacy_function"),
    (r"optimizer can only optimize Tensors, but one of the params is ([\w.]+)|params argument given to the optimizer "
     r"should be an iterable of Tensors or dicts, but got ([\w.]+)", Cause.OPTIMIZER_PARAMS, "optimizer_params"),
    (r"backward\(\) called inside a functorch transform", Cause.BACKWARD_IN_TRANSFORM, "backward_in_transform"),
    (r"vmap: It looks like you're calling \.item\(\) on a Tensor", Cause.ITEM_IN_TRANSFORM, "item_in_transform"),
    (r"Cannot insert a Tensor that requires grad as a constant", Cause.JIT_CONSTANT_REQUIRES_GRAD, "jit_constant"),
))

#: any message of :data:`RAISED` (the error table's entry for :func:`raised_here`)
ANY = re.compile("|".join(f"(?:{p.pattern})" for p, _, _ in RAISED), re.S)


@rule("failure", 110)
def raised_here(dx, q):
    """An error whose cause is the line that raised it (the table :data:`RAISED`): the cause, that line, and what
    the call was given (the tensor it wrote into, by name, where the trace saw the call)."""
    for pattern, cause, form in RAISED:
        m = pattern.search(q.msg)
        if m is None:
            continue
        x, e = dx.d.exception, dx.error_event()
        site = (e.site if e else None) or x.site
        tensor = dx.label(e.inputs[0].tid) if e is not None and e.inputs else None
        op = _opname(e) if e is not None else None
        return found(cause, site, "the step", f"raised_here.{form}", site, op, tensor,
                     tuple(g for g in m.groups() if g is not None), evidence=[e] if e else [])
    return None
