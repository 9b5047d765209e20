"""Where a non-finite value entered the forward: read only after a backward that ended with a non-finite gradient
(or that anomaly mode stopped on NaN), never while recording.

At that moment some of the step's tensors are still alive: those the user's frames hold (a traceback keeps the
failing step's locals), and those the graph saved for backward (a node's ``_saved_result``, ``_saved_self``,
``_saved_other``; not in a step with a checkpointed region, whose saved tensors are unpacked by running its
forward again). Each one that can be read is checked for inf/nan (``torch.isfinite``), within a budget; what
cannot be read stays unknown. The diagnosis (``Facts.nonfinite_entry``) finds the first recorded call whose result
holds a non-finite value from inputs that do not, on the way to the node that first sent one. Calls that fill in a
non-finite constant (``torch.full(..., nan)``, ``masked_fill(mask, -inf)``) are marked when recorded (a check of
their scalar arguments: those calls only)."""
from __future__ import annotations

import math

import torch

from ._compat import local_shard
from ._norms import _Own

_T = torch.Tensor
#: the saved attributes of a graph node and which recorded tensor they are: ("out", i) the call's i-th result,
#: ("in", i) its i-th tensor input
_SAVED = (("_saved_result", ("out", 0)), ("_saved_self", ("in", 0)), ("_saved_other", ("in", 1)),
          ("_saved_input", ("in", 0)))
_BUDGET = 4096  # tensors read at most
_MAX_NUMEL = 1 << 26  # (a tensor larger than this is not read: unknown)


def value_state(t) -> str | None:
    """"nan", "inf" or "finite" for a floating-point tensor whose values can be read, else None."""
    try:
        if not isinstance(t, _T):
            return None
        t = local_shard(t)  # (a DTensor's: this rank's shard, read without a collective)
        if not (t.is_floating_point() or t.is_complex()) or t.numel() == 0 \
                or t.numel() > _MAX_NUMEL or t.is_meta or t.is_sparse:
            return None
        if t.untyped_storage().nbytes() < (t.storage_offset() + t.numel()) * t.element_size():
            return None  # (storage freed under it: FSDP resizes an unsharded parameter's storage to 0 after use)
        with _Own(), torch.no_grad():
            if bool(torch.isfinite(t).all()):
                return "finite"
            return "nan" if bool(torch.isnan(t).any()) else "inf"
    except (RuntimeError, NotImplementedError, TypeError, ValueError):  # (a subclass, a fake tensor, freed storage)
        return None


def scan(raws, upto, refs, raw_nodes, nodes) -> dict:
    """``{tid: "nan" | "inf" | "finite"}`` for the recorded tensors of events before ``upto`` whose values can be
    read now: alive (``refs``: tid -> reference) or saved by their graph node (``raw_nodes``/``nodes``: the walk's
    nodes, which name the event that made each)."""
    out: dict = {}
    budget = [_BUDGET]

    def put(tid, t):
        if tid in out or budget[0] <= 0:
            return
        budget[0] -= 1
        st = value_state(t)
        if st is not None:
            out[tid] = st

    for i in range(min(upto, len(raws))):
        r = raws[i]
        if r is None or r.kind not in ("op", "cut", "inplace", "external"):
            continue
        for packed in (*r.inputs, *r.outputs):
            if type(packed) is not int:
                continue
            tid = (packed >> 2) & 0xFFFFFFFF
            ref = refs.get(tid)
            t = ref() if ref is not None else None
            if t is not None:
                put(tid, t)
        if budget[0] <= 0:
            break
    if any(r is not None and r.context == "checkpoint" for r in raws[:upto]):
        # a saved tensor of a checkpointed region is unpacked by recomputing its forward (user code): not read
        return out
    for rn, n in zip(raw_nodes or (), nodes or ()):
        if rn.event is None or rn.event >= len(raws) or raws[rn.event] is None or budget[0] <= 0:
            continue
        r = raws[rn.event]
        for attr, (side, k) in _SAVED:
            refs_of = r.outputs if side == "out" else r.inputs
            if k >= len(refs_of) or type(refs_of[k]) is not int:
                continue
            tid = (refs_of[k] >> 2) & 0xFFFFFFFF
            if tid in out:
                continue
            try:
                t = getattr(n, attr)
            except (AttributeError, RuntimeError):  # (not saved by this node, or already freed)
                continue
            put(tid, t)
    return out


def nonfinite_scalar(args, kwargs) -> bool:
    """Is a Python number among a fill call's arguments inf or nan (``torch.full(size, float("nan"))``)?"""
    for a in (*args, *kwargs.values()):
        if type(a) is float and not math.isfinite(a):
            return True
    return False
