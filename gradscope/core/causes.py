"""The one vocabulary of why a gradient is what it is: :class:`Cause`, shared by the kinds of cut the recorder
records (``Event.cut``, :data:`CUT_KINDS`) and the causes an Explanation names. Plain data, no torch."""
from __future__ import annotations

import enum

__all__ = ["Cause", "CUT_KINDS"]


class Cause(enum.StrEnum):
    """The one vocabulary of why a gradient is what it is: every cause an Explanation names and every kind of
    cut the recorder records (``Event.cut``), one member each. A cut kind knows the cause it means
    (``Cause.NUMPY.cause is Cause.NUMPY_ROUNDTRIP``); ``detach`` and ``inference_mode`` are both. A str Enum:
    a member equals its string (``Cause.NUMPY == "numpy"``) and prints and serialises as it."""

    def __repr__(self) -> str:  # (shown like the string it equals: a user's `exp.cause` at a prompt reads 'detach')
        return repr(self.value)

    # cut kinds (Event.cut)
    DETACH = "detach"
    DATA = "data"
    DATA_SET = "data_set"
    NUMPY = "numpy"
    ITEM = "item"
    TOLIST = "tolist"
    REWRAP = "rewrap"
    NO_GRAD = "no_grad"
    INFERENCE_MODE = "inference_mode"
    NONDIFF = "nondiff"
    ZERO_GRAD_OP = "zero_grad_op"
    INT_CAST = "int_cast"
    CHECKPOINT = "checkpoint"
    # causes (Explanation.cause)
    DATA_ATTR = "data_attr"
    NUMPY_ROUNDTRIP = "numpy_roundtrip"
    ITEM_ROUNDTRIP = "item_roundtrip"
    TOLIST_ROUNDTRIP = "tolist_roundtrip"
    TENSOR_REWRAP = "tensor_rewrap"
    NO_GRAD_BLOCK = "no_grad_block"
    NONDIFFERENTIABLE_OP = "nondifferentiable_op"
    INTEGER_CAST = "integer_cast"
    REQUIRES_GRAD_FALSE = "requires_grad_false"
    FROZEN_PARAM = "frozen_param"
    NON_LEAF_NO_RETAIN_GRAD = "non_leaf_no_retain_grad"
    LEAF_REPLACED_BY_TO = "leaf_replaced_by_to"
    PARAM_RECREATED = "param_recreated"
    UNUSED_PARAMETER = "unused_parameter"
    AUTOGRAD_GRAD_NOT_BACKWARD = "autograd_grad_not_backward"
    SET_TO_NONE_TIMING = "set_to_none_timing"
    NO_BACKWARD = "no_backward"
    INPLACE_SAVED_TENSOR = "inplace_saved_tensor"
    REENTRANT_CHECKPOINT = "reentrant_checkpoint"
    CUSTOM_FUNCTION = "custom_function"
    HOOK_MODIFIED = "hook_modified"
    ZERO_GRADIENT = "zero_gradient"
    GRADIENT_CANCELLED = "gradient_cancelled"
    BACKWARD_TWICE = "backward_twice"
    NONFINITE_GRADIENT = "nonfinite_gradient"
    # errors PyTorch raises at the line that is their cause
    LEAF_INPLACE = "leaf_inplace"
    OUT_ARGUMENT = "out_argument"
    MULTI_OUTPUT_VIEW_INPLACE = "multi_output_view_inplace"
    RESIZE_REQUIRES_GRAD = "resize_requires_grad"
    DETACH_VIEW_INPLACE = "detach_view_inplace"
    GRADIENT_SHAPE_MISMATCH = "gradient_shape_mismatch"
    GRADIENT_COUNT_MISMATCH = "gradient_count_mismatch"
    INTEGER_REQUIRES_GRAD = "integer_requires_grad"
    REQUIRES_GRAD_NON_LEAF = "requires_grad_non_leaf"
    MIXED_BACKWARD_HOOKS = "mixed_backward_hooks"
    GRAD_ASSIGNMENT_MISMATCH = "grad_assignment_mismatch"
    PARAMETER_ASSIGNED_TENSOR = "parameter_assigned_tensor"
    LEGACY_FUNCTION = "legacy_function"
    OPTIMIZER_PARAMS = "optimizer_params"
    BACKWARD_IN_TRANSFORM = "backward_in_transform"
    ITEM_IN_TRANSFORM = "item_in_transform"
    JIT_CONSTANT_REQUIRES_GRAD = "jit_constant_requires_grad"
    NONSCALAR_BACKWARD = "nonscalar_backward"
    RETAIN_GRAD_NO_GRAD = "retain_grad_no_grad"
    HOOK_ON_NO_GRAD_TENSOR = "hook_on_no_grad_tensor"
    HOOK_CHANGED_GRADIENT = "hook_changed_gradient"
    INPUT_NOT_REQUIRING_GRAD = "input_not_requiring_grad"
    DTYPE_MISMATCH = "dtype_mismatch"
    NO_GRAD_VIEW_INPLACE = "no_grad_view_inplace"
    UNREGISTERED_CONTAINER = "unregistered_container"
    INPLACE_ON_EXPANDED = "inplace_on_expanded"
    PARAM_IN_TWO_GROUPS = "param_in_two_groups"
    OPTIMIZE_NON_LEAF = "optimize_non_leaf"
    CHECKPOINT_RECOMPUTE_MISMATCH = "checkpoint_recompute_mismatch"
    DDP_MARKED_TWICE = "ddp_marked_twice"
    SAVE_FOR_BACKWARD_NON_TENSOR = "save_for_backward_non_tensor"
    DEEPCOPY_NON_LEAF = "deepcopy_non_leaf"
    BACKWARD_HOOK_INPLACE = "backward_hook_inplace"
    OK = "ok"
    NOT_TRAINED = "not_trained"
    UNKNOWN = "unknown"

    @property
    def is_cut(self) -> bool:
        """A kind of cut the recorder records (``Event.cut``)."""
        return self in _CUT_GLOSS

    @property
    def is_cause(self) -> bool:
        """A cause an Explanation names."""
        return self in _CAUSE_GLOSS

    @property
    def cause(self) -> "Cause":
        """The cause a cut kind means (itself for a cause)."""
        return _CUT_MEANS.get(self, self)

    @classmethod
    def causes(cls) -> list:
        """The causes, in the order the documentation lists them."""
        return list(_CAUSE_GLOSS)

    @classmethod
    def cut_kinds(cls) -> list:
        """The kinds of cut, in the order the documentation lists them."""
        return list(_CUT_GLOSS)

    @property
    def gloss(self) -> str:
        """One line on what it means (as a cause when it is one, else as a cut)."""
        return _CAUSE_GLOSS.get(self) or _CUT_GLOSS[self]


_CUT_GLOSS = {
    Cause.DETACH: "detach() returns a tensor without history",
    Cause.DATA: ".data reads the values without history",
    Cause.DATA_SET: ".data = ... replaced the values without autograd seeing it",
    Cause.NUMPY: "numpy() / np.asarray leaves torch",
    Cause.ITEM: "item() / float() / int() turns a tensor into a Python number",
    Cause.TOLIST: "tolist() turns a tensor into Python lists",
    Cause.REWRAP: "torch.tensor / as_tensor / new_tensor copies values into a fresh tensor",
    Cause.NO_GRAD: "computed with gradient recording disabled",
    Cause.INFERENCE_MODE: "computed under torch.inference_mode()",
    Cause.NONDIFF: "the operation has no gradient (argmax, comparison, indices)",
    Cause.ZERO_GRAD_OP: "the operation's gradient is zero almost everywhere (round, sign, floor)",
    Cause.INT_CAST: "cast to an integer or bool dtype, which cannot carry gradient",
    Cause.CHECKPOINT: "computed inside a reentrant checkpoint whose inputs need no grad",
}

#: the cause each cut kind means
_CUT_MEANS = {
    Cause.DATA: Cause.DATA_ATTR,
    Cause.DATA_SET: Cause.DATA_ATTR,
    Cause.NUMPY: Cause.NUMPY_ROUNDTRIP,
    Cause.ITEM: Cause.ITEM_ROUNDTRIP,
    Cause.TOLIST: Cause.TOLIST_ROUNDTRIP,
    Cause.REWRAP: Cause.TENSOR_REWRAP,
    Cause.NO_GRAD: Cause.NO_GRAD_BLOCK,
    Cause.NONDIFF: Cause.NONDIFFERENTIABLE_OP,
    Cause.ZERO_GRAD_OP: Cause.NONDIFFERENTIABLE_OP,
    Cause.INT_CAST: Cause.INTEGER_CAST,
    Cause.CHECKPOINT: Cause.REENTRANT_CHECKPOINT,
}

_CAUSE_GLOSS = {
    Cause.DETACH: "a .detach() cut the tensor off from autograd",
    Cause.DATA_ATTR: "a .data access used the values without autograd",
    Cause.NUMPY_ROUNDTRIP: "the values went through NumPy and came back without history",
    Cause.ITEM_ROUNDTRIP: "the value became a Python number with .item()/float()",
    Cause.TOLIST_ROUNDTRIP: "the values became Python lists with .tolist()",
    Cause.TENSOR_REWRAP: "torch.tensor()/new_tensor() copied the values into a tensor without history",
    Cause.NO_GRAD_BLOCK: "computed inside torch.no_grad() / set_grad_enabled(False)",
    Cause.INFERENCE_MODE: "computed inside torch.inference_mode()",
    Cause.NONDIFFERENTIABLE_OP: "an operation without a useful gradient (argmax, comparison, round)",
    Cause.INTEGER_CAST: "a cast to an integer or bool dtype",
    Cause.REQUIRES_GRAD_FALSE: "the tensor was created without requires_grad=True",
    Cause.FROZEN_PARAM: "the parameter was frozen (requires_grad=False)",
    Cause.NON_LEAF_NO_RETAIN_GRAD: "the tensor is not a leaf and retain_grad() was not called",
    Cause.LEAF_REPLACED_BY_TO: "the name was rebound to a .to()/.double() copy of the leaf",
    Cause.PARAM_RECREATED: "the parameter belongs to a module instance the forward no longer uses",
    Cause.UNUSED_PARAMETER: "the parameter was not used on the way to the loss",
    Cause.AUTOGRAD_GRAD_NOT_BACKWARD: "torch.autograd.grad returns gradients instead of filling .grad",
    Cause.SET_TO_NONE_TIMING: "zero_grad() / .grad = None ran after backward",
    Cause.NO_BACKWARD: "no backward ran",
    Cause.INPLACE_SAVED_TENSOR: "an in-place write changed a tensor saved for backward",
    Cause.REENTRANT_CHECKPOINT: "a reentrant checkpoint whose inputs need no grad",
    Cause.CUSTOM_FUNCTION: "a custom autograd.Function returned no gradient for this input",
    Cause.HOOK_MODIFIED: "a gradient hook replaced or zeroed the gradient",
    Cause.ZERO_GRADIENT: "the gradient flows but is exactly zero",
    Cause.GRADIENT_CANCELLED: "its uses sent gradients that cancel exactly (a loss that is a difference of equal terms in "
                              "it, as a WGAN critic's last bias): by design",
    Cause.BACKWARD_TWICE: "backward ran a second time through a graph that was already freed",
    Cause.NONFINITE_GRADIENT: "the gradient contains inf or nan",
    Cause.LEAF_INPLACE: "an in-place write into a leaf that requires grad (or a view of it) while grad is recorded",
    Cause.OUT_ARGUMENT: "an out= argument, which cannot carry a gradient, with an input that requires grad",
    Cause.MULTI_OUTPUT_VIEW_INPLACE: "an in-place change of one of the views split/chunk/unbind returned",
    Cause.RESIZE_REQUIRES_GRAD: "resize_() of a tensor that requires grad",
    Cause.DETACH_VIEW_INPLACE: "detach_() of a view",
    Cause.GRADIENT_SHAPE_MISMATCH: "the gradient passed to backward() has another shape than its output",
    Cause.GRADIENT_COUNT_MISMATCH: "backward() got another number of gradients than outputs",
    Cause.INTEGER_REQUIRES_GRAD: "an integer or bool tensor was asked to require grad",
    Cause.REQUIRES_GRAD_NON_LEAF: "requires_grad was changed on a computed (non-leaf) tensor",
    Cause.MIXED_BACKWARD_HOOKS: "a module has both register_backward_hook and register_full_backward_hook hooks",
    Cause.GRAD_ASSIGNMENT_MISMATCH: "a .grad was assigned a tensor of another shape or dtype",
    Cause.PARAMETER_ASSIGNED_TENSOR: "a computed tensor was assigned to a module's registered Parameter",
    Cause.LEGACY_FUNCTION: "an old-style autograd.Function (non-static forward) was called",
    Cause.OPTIMIZER_PARAMS: "an optimizer was given something other than an iterable of tensors",
    Cause.BACKWARD_IN_TRANSFORM: "backward() was called inside a torch.func transform (vmap, grad)",
    Cause.ITEM_IN_TRANSFORM: ".item() was called inside vmap",
    Cause.JIT_CONSTANT_REQUIRES_GRAD: "torch.jit.trace met a tensor that requires grad as a constant",
    Cause.NONSCALAR_BACKWARD: "backward() without gradient= on a result of more than one element",
    Cause.RETAIN_GRAD_NO_GRAD: "retain_grad() on a tensor that does not require grad",
    Cause.HOOK_ON_NO_GRAD_TENSOR: "register_hook on a tensor that does not require grad",
    Cause.HOOK_CHANGED_GRADIENT: "a tensor hook returned a gradient of another size or dtype",
    Cause.INPUT_NOT_REQUIRING_GRAD: "autograd.grad asked for the gradient of a tensor that does not require grad",
    Cause.DTYPE_MISMATCH: "a tensor of another dtype (a float64 target from NumPy) met the model's float32 values",
    Cause.NO_GRAD_VIEW_INPLACE: "a view taken under no_grad written in place later with grad on",
    Cause.UNREGISTERED_CONTAINER: "layers kept in a plain list or dict: parameters(), .to() and optimizers never see them",
    Cause.INPLACE_ON_EXPANDED: "an in-place write into an expand()ed tensor, whose elements share memory",
    Cause.PARAM_IN_TWO_GROUPS: "an optimizer's parameter groups list one parameter twice",
    Cause.OPTIMIZE_NON_LEAF: "an optimizer was given a computed tensor (a `.double()`/`.to()` copy), not a leaf",
    Cause.CHECKPOINT_RECOMPUTE_MISMATCH: "a checkpointed function computed something else when it was recomputed",
    Cause.DDP_MARKED_TWICE: "DDP saw one parameter's gradient ready twice in one backward (reentrant checkpoint)",
    Cause.SAVE_FOR_BACKWARD_NON_TENSOR: "ctx.save_for_backward() was given something other than a tensor",
    Cause.DEEPCOPY_NON_LEAF: "copy.deepcopy of a module holding a computed tensor (a cached activation, weight_norm)",
    Cause.BACKWARD_HOOK_INPLACE: "an in-place op (ReLU(inplace=True)) on the output of a module with a full backward hook",
    Cause.OK: "the gradient is there and non-zero",
    Cause.NOT_TRAINED: "not trained by this step (no optimizer holds it; used only under no_grad, or not at all)",
    Cause.UNKNOWN: "the trace does not hold enough evidence",
}

#: Every value ``Event.cut`` can take, with what it means (a view of :class:`Cause`).
CUT_KINDS = {str(k): g for k, g in _CUT_GLOSS.items()}
