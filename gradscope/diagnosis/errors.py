"""The error table: PyTorch's backward error messages -> the `failure` rule that explains each (the rules
are in :mod:`.rules_failure`), and the dispatch over it."""
from __future__ import annotations

import re

from ..core.model import Cause
from . import templates as say  # noqa: F401  (registers the wording the findings here name)
from .common import statement_site
from .finding import Finding, found
from .registry import Query, REGISTRY, rule
from . import rules_failure, rules_twice  # noqa: F401  (register the failure rules this table names)
from . import rules_containers, rules_raised, rules_upstream  # (register plain_container_error, raised_here,
#   raised_upstream; their messages)


#: PyTorch's error messages -> the rule that explains them (first match that returns an explanation wins;
#: an error that matches none is "unknown", reported where it was raised).
ERRORS = tuple((re.compile(p, re.S), h) for p, h in (
    (r"modified by an inplace operation", "inplace_modified_saved_tensor"),
    (r"does not require grad and does not have a grad_fn", "no_grad_fn"),
    (r"Can't call numpy\(\) on Tensor that requires grad", "numpy_of_grad_tensor"),
    (r"Inference tensors cannot be saved for backward", "inference_tensor_saved"),
    (r"backward through the graph a second time", "backward_twice"),
    (r"marked with @once_differentiable", "once_differentiable"),
    (r"returned an incorrect number of gradients|returned an invalid gradient|function \S+ returned", "custom_function_gradients"),
    (r"derivative for .* is not implemented|is not implemented.*derivative for", "no_derivative"),
    (r"returned nan values in its \d+th output", "anomaly_nonfinite"),
    (r"appears to not have been used in the graph", "grad_input_unused"),
    (r"did not receive grad|finished reduction.*not used in producing loss", "reduction_unused"),
    (rules_containers.EMPTY.pattern + "|" + rules_containers.MISMATCH.pattern, "plain_container_error"),
    (rules_upstream.ANY.pattern, "raised_upstream"),  # the errors whose cause is an earlier line
    (rules_raised.ANY.pattern, "raised_here"),  # the errors whose cause is the line that raised them
))
_ERRORS = ERRORS  # (the name the tests and older callers use)


def failure_finding(dx) -> Finding | None:
    """The first rule in the table whose pattern matches the error message and that has an explanation;
    `unknown_error` (reported where it was raised) when none does."""
    x = dx.d.exception
    if x is None:
        return None
    q = Query(msg=x.message)
    exp = None
    for pattern, name in ERRORS:
        if pattern.search(q.msg):
            exp = REGISTRY.run(name, dx, q)
            if exp is not None:
                break
    if exp is None:
        exp = REGISTRY.run("unknown_error", dx, q)
    exp.status = "error"
    exp.site = statement_site(exp.site)
    return exp


@rule("failure", 1000)
def unknown_error(dx, q):
    """An error no rule explains: reported where it was raised."""
    x, msg = dx.d.exception, q.msg
    e = dx.error_event()
    return found(
        Cause.UNKNOWN, (e.site if e else None) or x.site, "the step", "unknown_error", x, msg,
        evidence=[e] if e else [])
