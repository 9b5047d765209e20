"""Every private PyTorch access of the recorder, in one place, each with what it relies on.

The rest of gradscope uses only public torch API and the names defined here (tests/test_layers.py
checks it). When a torch release moves one of these, this is the file to change.
"""
from __future__ import annotations

import torch
import torch.nn as nn

_NO_TF = torch._C.DisableTorchFunction


_is_compiling = torch.compiler.is_compiling


_jit_tracing = torch._C._get_tracing_state


_seq = torch._C._autograd._get_sequence_nr  # the sequence number the next graph node gets (per thread)


_dispatch_len = torch._C._len_torch_dispatch_stack


_stack_len = torch._C._len_torch_function_stack


_stack_at = torch._C._get_function_stack_at


_CALL_IMPL = nn.Module._call_impl.__code__


_RF_ENTER = torch.ops.profiler._record_function_enter_new


_RF_EXIT = torch.ops.profiler._record_function_exit._RecordFunction


_SET_GRAD = torch._C._set_grad_enabled


_HTF_CODE = torch.overrides.handle_torch_function.__code__
