"""Diagnosis rules: turn a recorded trace into explanations. Pure: no torch imports.

The central question is *where did gradient flow stop?* Three kinds of evidence answer it:

* the data path: which recorded calls carried the target's values towards a backward
  root, and which of them did not let gradient through (a cut);
* the backward record: which autograd nodes ran and what gradient each sent along each
  edge (so a custom backward returning None, a dead ReLU, or a hook that zeroed the
  gradient can be pinned to a node and its forward line);
* the state changes: requires_grad switches, zero_grad after backward, modules replaced.

The package:

* :mod:`.registry` -- rules registered per gradient status with an explicit priority;
* :mod:`.facts` -- the read-only queries the rules share (labels, reachability, regions, lineage);
* ``rules_*`` -- the rules per status (:mod:`.rules_received`, :mod:`.rules_zero`, :mod:`.rules_none`,
  :mod:`.rules_unused`, :mod:`.rules_failure`) and the helpers only they use;
* :mod:`.errors` -- the table of PyTorch error messages -> failure rule;
* :mod:`.cuts` -- the cut on the data path (shared by the none and failure rules);
* :mod:`.wording` -- the text: summaries and fixes filled from the user's code and names;
* :mod:`.core` -- :class:`Diagnosis`: ``why``, ``failure``, ``cuts``, ``summarize``.

``ORDER`` below is the one place that shows every rule and the order they run in, per status; the
registry must agree with it (checked at import: a rule missing here, or out of order, raises).
"""
from __future__ import annotations

from .common import CUT_CAUSE, statement_site
from .core import Diagnosis
from .errors import _ERRORS, ERRORS  # noqa: F401  (_ERRORS: the name older callers use)
from .registry import REGISTRY, STATUSES, RuleConflict

__all__ = ["Diagnosis", "CUT_CAUSE", "ERRORS", "ORDER", "REGISTRY", "RULES", "RuleConflict", "statement_site"]

#: every rule, per status, in the order it runs (the first that explains the gradient decides)
ORDER = {
    "received": (
        "cleared_after_use",
        "corrupting_write",
        "unfrozen_after_optimizer_built",
        "not_in_any_optimizer",
        "gradient_flows",
    ),
    "nonfinite": (
        "corrupting_write",
        "first_nonfinite_node",
        "nonfinite_unknown",
    ),
    "zero": (
        "corrupting_write",
        "zeroed_after_backward",
        "retained_zeroed",
        "zeroed_in_backward",
        "zero_unknown",
    ),
    "zero_node": (
        "hook_replaced_gradient",
        "custom_function_zero",
        "module_backward_hook_zero",
        "tensor_hook_zero",
        "zeroing_op",
    ),
    "none": (
        "retain_grad_after_backward",
        "to_copy_is_not_a_leaf",
        "non_leaf",
        "used_before_requires_grad",
        "buffer",
        "param_replaced",
        "unfreeze_kept_away",
        "frozen_in_trace",
        "created_frozen",
        "frozen_before_trace",
        "manual_update_rebind",
        "created_without_requires_grad",
        "backward_failed",
        "no_backward",
        "autograd_grad_only",
        "post_accumulate_hook_cleared",
        "cleared_then_autograd_grad",
        "cleared_before_read",
        "backward_node_sent_none",
        "reached_only_by_autograd_grad",
        "data_cut",
        "hooked_module_not_called",
        "other_instance_in_forward",
        "returned_input",
        "skipped_child",
        "stale_optimizer",
        "never_used",
        "forward_hook_replaced_output",
        "result_discarded",
    ),
    "failure": (
        "inplace_modified_saved_tensor",
        "no_grad_fn",
        "numpy_of_grad_tensor",
        "inference_tensor_saved",
        "backward_twice",
        "once_differentiable",
        "custom_function_gradients",
        "no_derivative",
        "grad_input_unused",
        "reduction_unused",
        "unknown_error",
    ),
}

RULES = REGISTRY


def _check_order():
    got = {s: tuple(r.name for r in REGISTRY.ordered(s)) for s in STATUSES}
    if got != {s: tuple(ORDER.get(s, ())) for s in STATUSES}:
        raise RuleConflict("the registered rules and their priorities do not match diagnosis.ORDER:\n"
                           + REGISTRY.format())


_check_order()
