"""Diagnosis rules: turn a recorded trace into explanations. Pure: no torch imports.

The central question is *where did gradient flow stop?* Three kinds of evidence answer it:

* the data path: which recorded calls carried the target's values towards a backward
  root, and which of them did not let gradient through (a cut);
* the backward record: which autograd nodes ran and what gradient each sent along each
  edge (so a custom backward returning None, a dead ReLU, or a hook that zeroed the
  gradient can be pinned to a node and its forward line);
* the state changes: requires_grad switches, zero_grad after backward, modules replaced.

Stages, each an object of its own:

1. :class:`~.index.TraceIndex` (:mod:`.index`, with :mod:`.facts` and :mod:`gradscope.verdict`): built once
   from the TraceData; read-only facts (labels, reachability, regions, lineage, who trains, what it got) and
   the verdicts on cuts as data (``verdicts()`` -> {event index: "harmful" | "benign"}).
2. Rules (``rules_*``; :mod:`.cuts` for the data-path cut the none and failure rules share, :mod:`.errors`
   for the table of PyTorch error messages -> failure rule, whose tables of errors caused at the raising line
   and at an earlier one are :mod:`.rules_raised` and :mod:`.rules_upstream`; :mod:`.rules_twice` the failure rule
   for a second backward through a freed graph): ``fn(index, query) -> Finding | None``
   (:class:`~.finding.Finding`: data only: cause, site, target, evidence, path, and the ``facts`` its wording
   needs), registered per gradient status with a priority (:mod:`.registry`).
3. Passes over findings (:mod:`.core`): not trained by the step, other cuts on other paths, tied weights,
   one finding for several targets, covered by the failure. They add data, never text.
4. Wording (:mod:`.wording`; the functions in ``templates*.py``): one pure function per rule name (or
   ``rule.form``), ``facts -> (summary, detail, fix)``, that never sees the index; :func:`.wording.explain`
   makes the public Explanation from a finding at the end. A summary is a :class:`~.wording.Said` ("<subject>:
   <reason>"): a wording that quotes another finding, a group and the passes' additions use its parts
   (``quote``, ``about``, ``plus``), never its text taken apart.

**Where a new rule goes**: a function ``fn(dx, q)`` in the ``rules_<status>.py`` of its status, decorated
``@rule(status, priority)``, returning ``found(cause, site, target, "<rule name>", *facts, evidence=...)``
(:func:`~.finding.found`); its name in ``ORDER`` below at its place; its wording a function in
``templates.py`` (``templates_failure.py`` for a failure rule, ``templates_shared.py`` for a finding several rules
share) decorated ``@words("<rule name>")`` whose parameters are the facts; its summary ``said(subject, reason)``. Rules never import each other (``lint-imports``): facts several rules need go to
:class:`~.facts.Facts` as public methods, a finding several rules share is a public method of the Diagnosis.
:class:`~.core.Diagnosis` runs it all: ``why``, ``failure``, ``cuts``/``verdicts``, ``summarize``.

``ORDER`` below is the one place that shows every rule and the order they run in, per status; the
registry must agree with it (checked at import: a rule missing here, or out of order, raises), and every
wording key must name a rule (or the not_trained pass).
"""
from __future__ import annotations

from .common import CUT_CAUSE, statement_site
from .core import Diagnosis
from .errors import _ERRORS, ERRORS  # noqa: F401  (_ERRORS: the name older callers use)
from .finding import Finding
from .index import TraceIndex
from .registry import REGISTRY, STATUSES, RuleConflict
from .wording import WORDING, explain

__all__ = ["Diagnosis", "CUT_CAUSE", "ERRORS", "Finding", "ORDER", "REGISTRY", "RULES", "RuleConflict", "TraceIndex",
           "WORDING", "explain", "statement_site"]

#: every rule, per status, in the order it runs (the first that explains the gradient decides)
ORDER = {
    "received": (
        "cleared_after_use",
        "corrupting_write",
        "unfrozen_after_optimizer_built",
        "plain_container",
        "not_in_any_optimizer",
        "create_graph_backward",
        "legacy_module_hook",
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
        "piecewise_linear_curvature",
        "zeroing_op",
        "cancelled_uses",
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
        "anomaly_nonfinite",
        "grad_input_unused",
        "reduction_unused",
        "plain_container_error",
        "raised_upstream",
        "raised_here",
        "unknown_error",
    ),
}

RULES = REGISTRY

#: wording keys that name a pass over findings, not a rule
PASSES = ("not_trained",)


def _check_order():
    got = {s: tuple(r.name for r in REGISTRY.ordered(s)) for s in STATUSES}
    if got != {s: tuple(ORDER.get(s, ())) for s in STATUSES}:
        raise RuleConflict("the registered rules and their priorities do not match diagnosis.ORDER:\n"
                           + REGISTRY.format())
    stray = sorted(k for k in WORDING if k.split(".", 1)[0] not in REGISTRY and k.split(".", 1)[0] not in PASSES)
    if stray:
        raise RuleConflict(f"wording for no rule: {', '.join(stray)}")


_check_order()
