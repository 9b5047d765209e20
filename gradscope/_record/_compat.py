"""Every private PyTorch access of gradscope, in one place, each with what it relies on.

The rest of the package uses only public torch API and the names defined here
(tests/test_layers.py scans for it). When a torch release moves one of these, this is the file
to change; checked against torch 2.13 (the declared lower bound, pyproject.toml).
Hot-path accessors are plain aliases of torch's own callables (no wrapper call per op).
"""
from __future__ import annotations

import os
import sys

import torch
import torch.nn as nn

_T = torch.Tensor

# --- torch-function and dispatch mode stacks (torch/_C, torch/overrides.py) -------------------
#: context manager that turns every torch-function mode and subclass override off (C++ guard)
disable_torch_function = torch._C.DisableTorchFunction
# whether any TorchFunctionMode is on (C++ flag; cheaper than reading the stack)
torch_function_mode_enabled = torch._C._is_torch_function_mode_enabled
# TensorBase's own C getter of requires_grad (the watch shadows nn.Parameter's attribute: _flags)
tensorbase_requires_grad_get = torch._C.TensorBase.requires_grad.__get__
#: length of / entry of / pop from / push onto the C++ torch-function mode stack (torch/overrides.py
#: uses the same four to implement _push_mode/_pop_mode)
function_stack_len = torch._C._len_torch_function_stack
function_stack_at = torch._C._get_function_stack_at
pop_function_mode = torch._C._pop_torch_function_stack
push_function_mode = torch._C._push_on_torch_function_stack
#: the torch-function mode stack as a list, innermost last (torch.overrides' own helper)
current_function_modes = torch.overrides._get_current_function_mode_stack
#: length of the C++ dispatch (TorchDispatchMode) stack
dispatch_stack_len = torch._C._len_torch_dispatch_stack


def pop_function_mode_above():
    """Pop the innermost torch-function mode (torch.overrides._pop_mode: also keeps its bookkeeping)."""
    return torch.overrides._pop_mode()


def push_function_mode_back(mode) -> None:
    """Push a mode popped with pop_function_mode_above back (torch.overrides._push_mode)."""
    torch.overrides._push_mode(mode)


def disable_dispatch_modes():
    """Context manager that takes every dispatch mode off its stack for its duration
    (torch.utils._python_dispatch._disable_current_modes, what torch's own mode helpers use)."""
    from torch.utils._python_dispatch import _disable_current_modes

    return _disable_current_modes()


#: the JIT tracer's state, None outside torch.jit.trace (torch._C._get_tracing_state)
jit_tracing_state = torch._C._get_tracing_state

# --- autograd -------------------------------------------------------------------------------
#: the sequence number the next graph node made in this thread gets (one per node, increasing)
next_sequence_nr = torch._C._autograd._get_sequence_nr
#: what torch.set_grad_enabled / no_grad / enable_grad call, seen by torch-function modes as a function
set_grad_enabled = torch._C._set_grad_enabled
#: one norm per tensor in one call (a private op, the one clip_grad_norm_ uses)
foreach_norm = torch._foreach_norm


def node_sequence_nr(node) -> int:
    """A graph node's sequence number (C++ Node::sequence_nr, exposed on every node type)."""
    return node._sequence_nr()


def forward_cls(node_type):
    """The autograd.Function class a custom-backward node type was made for (BackwardCFunction)."""
    return getattr(node_type, "_forward_cls", None)


#: node.name() strings: the leaf accumulator, module full-backward hooks, torch.compile regions
ACCUMULATE_GRAD = "torch::autograd::AccumulateGrad"
BACKWARD_HOOK_NODE = "BackwardHook"  # (a substring: BackwardHookFunctionBackward)
COMPILED_NODE = "CompiledFunction"  # (a substring: CompiledFunctionBackward)
#: node names of norm-preserving single-edge nodes: a gradient passes them unchanged up to layout
PASS_THROUGH_NODES = frozenset([
    "TBackward0", "ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0", "PermuteBackward0",
    "TransposeBackward0", "TransposeBackward1", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2",
    "SqueezeBackward3", "SqueezeBackward4", "UnsqueezeBackward0", "AliasBackward0", "CloneBackward0",
    "SelectBackward0", "SliceBackward0", "ViewAsRealBackward0", "ViewAsComplexBackward0",
])
#: prefix of a graph node's saved tensors as attributes (`_saved_self`, `_saved_other`, ...)
SAVED_PREFIX = "_saved_"

# --- tensor internals -------------------------------------------------------------------------
#: t._version: the in-place write counter (raises RuntimeError on inference tensors)
version = _T._version.__get__
#: t._base: the tensor a view was made from (None for a non-view)
base = _T._base.__get__
#: The two private tensor attributes read directly, not through the accessors above, on the path every
#: recorded op takes (packing each input's version, a new tensor's base, an in-place write's versions):
#: an accessor call costs ~50 ns more per read there. Only these names, and only in these modules
#: (tests/test_layers.py checks it); everywhere else uses version() / base().
DIRECT_TENSOR_ATTRS = ("_version", "_base")
DIRECT_ATTR_MODULES = ("_refs.py", "_calls.py")
#: t._is_view()
is_view = torch._C.TensorBase._is_view


def backward_hooks(t):
    """t._backward_hooks: the tensor's own hooks (register_hook), a dict or None."""
    return t._backward_hooks


def post_accumulate_grad_hooks(t):
    """t._post_accumulate_grad_hooks (register_post_accumulate_grad_hook), a dict or None."""
    return getattr(t, "_post_accumulate_grad_hooks", None)


#: private tensor properties PyTorch itself reads or writes while it works: never recorded
PRIVATE_TENSOR_PROPS = ("_version", "_base", "_backward_hooks", "_post_accumulate_grad_hooks")
PRIVATE_TENSOR_METHODS = ("_is_view",)


def tensor_getsets():
    """(name, descriptor) of every C-level tensor property (getset descriptors of TensorBase)."""
    return [(n, d) for n, d in vars(torch._C.TensorBase).items() if type(d).__name__ == "getset_descriptor"]


#: torch.autograd.profiler.record_function's ops: the markers around Optimizer.zero_grad() and others
RECORD_FUNCTION_ENTER = torch.ops.profiler._record_function_enter_new
RECORD_FUNCTION_EXIT = torch.ops.profiler._record_function_exit._RecordFunction

# --- nn.Module internals ------------------------------------------------------------------------
#: the code of Module._call_impl, the frame that runs a module call's hooks and forward
CALL_IMPL_CODE = nn.Module._call_impl.__code__
#: the code of torch.overrides.handle_torch_function (a Python-level torch function's dispatch)
HANDLE_TORCH_FUNCTION_CODE = torch.overrides.handle_torch_function.__code__


def module_parameters(m) -> dict:
    """m._parameters: a module's own parameters by name (None entries included); {} for a non-module."""
    return getattr(m, "_parameters", None) or {}


def module_buffers(m) -> dict:
    """m._buffers: a module's own buffers by name."""
    return getattr(m, "_buffers", None) or {}


def module_children(m) -> dict:
    """m._modules: a module's own submodules by name (None entries included)."""
    return getattr(m, "_modules", None) or {}


def module_hooks(m, kind: str) -> list:
    """A module's own hooks of one kind ("forward", "forward_pre", "backward", "backward_pre"), from
    its m._<kind>_hooks dict."""
    return list((getattr(m, f"_{kind}_hooks", None) or {}).values())


def legacy_backward_hooks(m) -> list:
    """The hooks of ``register_backward_hook`` (not the full variant: m._is_full_backward_hook is False)."""
    return module_hooks(m, "backward") if getattr(m, "_is_full_backward_hook", True) is False else []


# --- torch.fx -----------------------------------------------------------------------------------
def fx_line_map(gm):
    """(generated line -> graph node index, first line of the body) of an FX GraphModule's code
    (GraphModule._lineno_map and _prologue_start, set by its code generation); (None, 0) if absent."""
    return getattr(gm, "_lineno_map", None), (getattr(gm, "_prologue_start", 0) or 0)


# --- wrappers around an optimizer -----------------------------------------------------------------
def wrapped_optimizer(opt):
    """The optimizer a wrapper holds in a private attribute (Lightning's LightningOptimizer._optimizer)."""
    return getattr(opt, "_optimizer", None)


# --- torch's source layout (frames are told apart by their file under torch/) ---------------------
TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
OPTIM_FILES = "optim/"
CHECKPOINT_FILES = "utils/checkpoint"
FUNCTION_APPLY_FILE = "autograd/function.py"
INIT_FILE = "nn/init.py"
MODULES_DIR = "nn/modules/"
INIT_FUNCTIONS = ("__init__", "reset_parameters", "_reset_parameters")
#: (file, function) that runs ops on parameters on the user's behalf (module.to() / .double())
ON_BEHALF = {("nn/modules/module.py", "_apply")}
CLIP_FILES = "nn/utils/clip_grad"
DATA_FILES = "utils/data/"
FUNCTORCH_FILES = ("_functorch/", "func/")
COMPILE_FILES = ("_dynamo/", "_inductor/")
#: torch.distributed: FSDP's all-gathers, reduce-scatters and sharding, DDP's buckets, DTensor's redistribution
DISTRIBUTED_FILES = "distributed/"
BACKWARD_FILE = "autograd/__init__"
#: grad-mode machinery (no_grad and its context-manager decorator) and dispatch machinery
GRAD_MODE_FILES = ("autograd/grad_mode.py", "utils/_contextlib.py", "autograd/grad_mode")
DISPATCH_FILES = ("overrides", "_C", "nn/modules/module.py")
#: file names of code torch.compile / fx generate
GENERATED_PREFIX = "<eval_with_key"
GENERATED_MARK = "torchinductor"


#: torch.utils._contextlib's wrapper of a function decorated with a grad-mode context manager (@torch.no_grad()),
#: and its local holding the decorated function (a verification finds the region's decorator through it)
DECORATED_WRAPPER, DECORATED_LOCAL = "decorate_context", "func"


# --- FSDP2 (fully_shard) and DTensor -----------------------------------------------------------------
# Relied on (torch 2.13, torch/distributed/fsdp/_fully_shard/): an FSDPModule's `_get_fsdp_state()` holds its
# `_fsdp_param_group` (None when it manages no parameter itself), whose `fsdp_params` are FSDPParam objects: each
# has `sharded_param` (the DTensor Parameter registered on the module between forwards, the one the optimizer
# holds) and, after the first all-gather, `_unsharded_param` (one plain Parameter per FSDPParam, kept across
# iterations, swapped onto the module for forward and backward; its .grad is reduce-scattered into
# sharded_param.grad after backward). A DTensor's `_local_tensor` is this rank's shard.
def fsdp2_loaded() -> bool:
    """Whether FSDP2 was imported at all (nothing below is looked at otherwise)."""
    return "torch.distributed.fsdp" in sys.modules


def fsdp2_modules(modules) -> list:
    """The FSDP2 (fully_shard) modules among ``modules``."""
    cls = getattr(sys.modules.get("torch.distributed.fsdp"), "FSDPModule", None)
    return [m for m in modules if isinstance(m, cls)] if cls is not None else []


def fsdp2_unsharded(modules) -> dict:
    """id(unsharded parameter) -> its sharded parameter, for FSDP2 modules ``modules``."""
    out: dict = {}
    for m in modules:
        try:
            group = m._get_fsdp_state()._fsdp_param_group
            for fp in (group.fsdp_params if group is not None else ()):
                u = getattr(fp, "_unsharded_param", None)
                if u is not None:
                    out[id(u)] = fp.sharded_param
        except (AttributeError, RuntimeError):  # (another torch's layout: FSDP2's parameters stay as they are seen)
            continue
    return out


def local_shard(t):
    """This rank's part of a DTensor (``t`` itself for any other tensor)."""
    local = getattr(t, "_local_tensor", None) if type(t).__name__ == "DTensor" else None
    return t if local is None else local


def fsdp2_original(frame):
    """The parameter FSDP2 is sharding when a call is made from inside ``FSDPParam._init_sharded_param`` (its local
    ``param``: the model's original parameter, replaced by the sharded one it builds), else None."""
    f = frame
    for _ in range(12):
        if f is None:
            return None
        co = f.f_code
        if co.co_name == "_init_sharded_param" and co.co_filename.endswith("_fsdp_param.py"):
            return f.f_locals.get("param")
        f = f.f_back
    return None
